from __future__ import annotations

from django.utils.html import escape

from tests.conftest import SEED_PATH


def test_worksheet_has_every_question_then_the_answer_key(client, demo):
    response = client.get(SEED_PATH + "/worksheet")
    assert response.status_code == 200
    html = response.content.decode()
    key = html.find("Answer key for grown-ups")
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
    key_part = html[html.find("Answer key for grown-ups") :]
    for question in demo.questions.all():
        assert (
            f"<strong>{', '.join(question.correct_letters)}</strong> · {escape(question.prompt)}"
            in key_part
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
