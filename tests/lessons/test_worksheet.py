from __future__ import annotations

import re
from html import unescape

from lightmysky.lib.markdown import render_inline_markdown as escape  # as the page shows it
from tests.conftest import SEED_PATH
from tests.factories import make_lesson


def test_worksheet_has_every_question_then_the_answer_key(client, demo):
    response = client.get(SEED_PATH + "/worksheet")
    assert response.status_code == 200
    html = response.content.decode()
    key = html.find(">Answer key<")
    assert key != -1
    questions = list(demo.questions.all())
    assert len(questions) == 8
    for question in questions:
        first = html.find(escape(question.prompt))
        assert -1 < first < key
        assert html.find(escape(question.prompt), key) > key  # repeated in the key with its answer
    assert html.count('class="worksheet-question"') == 8
    for question in questions:
        assert question.explanation_html in html


def test_worksheet_answer_key_names_the_right_letters(client, demo):
    html = client.get(SEED_PATH + "/worksheet").content.decode()
    key_part = html[html.find(">Answer key<") :]
    for question in demo.questions.all():
        assert (
            f"<strong>{', '.join(question.correct_letters)}</strong> · "
            f'<span class="screen-only">{escape(question.prompt)}</span>' in key_part
        )


def test_worksheet_prints_on_a4_with_the_key_on_a_new_page(client, demo):
    css = client.get("/static/css/site.css")
    text = b"".join(css.streaming_content).decode()
    css.close()
    assert "size: A4" in text
    assert ".answer-key { break-before: page;" in text


def test_worksheet_wrong_slug_redirects(client, demo):
    response = client.get("/learn/computing/x-mt__e-JwIxHek/worksheet")
    assert response.status_code == 301
    assert response["Location"] == SEED_PATH + "/worksheet"


def worksheet_html(client, lesson) -> str:
    response = client.get(lesson.get_worksheet_url())
    assert response.status_code == 200
    return response.content.decode()


def test_on_screen_the_answer_key_is_behind_a_closed_disclosure(client, demo):
    html = worksheet_html(client, demo)
    key = re.search(
        r"<details class=\"answer-key\"[^>]*>\s*<summary[^>]*>(.*?)</summary>", html, re.S
    )
    assert key, "the key is a <details> element"
    assert " open" not in key[0]
    assert "Show the answer key" in key[1]
    assert html.find("<details") < html.find(">Answer key<")  # the whole key is inside it
    assert html.count('class="worksheet-question"') == 8
    assert html.find('class="worksheet-question"') < html.find("<details")


def test_the_sheet_carries_a_short_address_and_its_qr_code(client, demo, settings):
    settings.SITE_URL = "https://lightmysky.example"
    html = worksheet_html(client, demo)
    code = demo.worksheet_code(list(demo.questions.all()))
    assert f"Worksheet code <strong>{code}</strong>" in html
    short = f"lightmysky.example/w/{code}"
    assert f'<strong class="short-address">{short}</strong>' in html
    qr = re.search(
        r'<figure class="type-in-qr"><svg[^>]*viewBox="[^"]+"[^>]*>(.*?)</svg>', html, re.S
    )
    assert qr and f"<title>QR code of {short}</title>" in qr[1]
    # A link for those at a screen already, with the code filled in.
    assert f'href="{demo.get_absolute_url()}/worksheet/answers?code={code}"' in html


def test_instructions_say_one_answer_when_every_question_has_one(client, demo):
    html = worksheet_html(client, demo)
    assert "Each question has one right answer: tick its box." in html
    assert "every answer you think is right" not in html
    assert "Tick every right answer" not in html


def test_instructions_name_the_questions_that_take_several_answers(client, db):
    lesson = make_lesson()
    make_question_take_two(lesson.questions.get(position=3))
    html = worksheet_html(client, lesson)
    assert "Each question has one right answer: tick its box. Where a question says" in html
    assert html.count('<p class="tick-hint">Tick every right answer.</p>') == 1
    third = html.find(escape(lesson.questions.get(position=3).prompt))
    assert html.find("Tick every right answer.</p>") > third


def test_instructions_when_every_question_takes_several_answers(client, db):
    lesson = make_lesson()
    for question in lesson.questions.all():
        make_question_take_two(question)
    html = worksheet_html(client, lesson)
    assert "Each question may have more than one right answer" in html
    assert "Each question has one right answer" not in html
    assert 'class="tick-hint"' not in html


def test_the_worksheet_keeps_the_authored_choice_order(client, demo):
    html = worksheet_html(client, demo)
    blocks = html.split('<li class="worksheet-question">')[1:]
    questions = list(demo.questions.order_by("position"))
    assert len(blocks) >= len(questions)
    for question, block in zip(questions, blocks, strict=False):
        block = unescape(block)
        texts = [f"<strong>{c['letter']}</strong> {c['text']}" for c in question.labelled_choices]
        places = [block.find(text) for text in texts]
        assert places[0] > -1 and places == sorted(places), question.position


def make_question_take_two(question) -> None:
    question.choices[1]["correct"] = True
    question.save()
