"""Paper answers typed in from a printed worksheet feed the sky like on-screen ones."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
import time_machine
from django.utils import timezone

from practice.models import Memory, Review
from tests.conftest import SEED_PATH
from tests.practice.helpers import finish_round, form_token, shown_moment

URL = SEED_PATH + "/worksheet/answers"


def code_on_the_worksheet(client) -> str:
    html = client.get(SEED_PATH + "/worksheet").content.decode()
    return re.search(r"Worksheet code <strong>([A-Z0-9]{6})</strong>", html)[1]


def paper(client, demo, answers: dict[int, str], code: str | None = None):
    token = form_token(client.get(URL))
    data = {"token": token, "code": code or code_on_the_worksheet(client)}
    data |= {f"answer_{n}": letters for n, letters in answers.items()}
    return client.post(URL, data)


def right(demo, position: int) -> str:
    return ",".join(demo.questions.get(position=position).correct_letters)


def wrong(demo, position: int) -> str:
    question = demo.questions.get(position=position)
    return next(c["letter"] for c in question.labelled_choices if not c["correct"])


def test_the_worksheet_shows_a_code_and_where_to_type_answers(client, demo):
    html = client.get(SEED_PATH + "/worksheet").content.decode()
    assert re.search(r"Worksheet code <strong>[A-Z0-9]{6}</strong>", html)
    assert f'href="{URL}?code=' in html


def test_typed_in_answers_are_graded_scheduled_and_explained_like_on_screen(client, demo):
    answers = {1: right(demo, 1), 2: wrong(demo, 2), 3: right(demo, 3).lower()}
    response = paper(client, demo, answers)
    assert response.status_code == 302
    results = client.get(response["Location"]).content.decode()
    assert "2 of 3 right" in results
    assert "Questions 4, 5, 6, 7, 8 were left blank, so they are not counted." in results
    assert demo.questions.get(position=2).explanation_html in results
    reviews = Review.objects.order_by("question__position")
    assert [(r.question.position, r.correct, r.rating) for r in reviews] == [
        (1, True, 3),
        (2, False, 1),
        (3, True, 3),
    ]
    assert Memory.objects.count() == 3
    sky = client.get("/sky").content.decode()
    assert "<strong>0 lit · 2 kindled</strong>" in sky


def test_the_same_sheet_sent_twice_counts_once(client, demo):
    token = form_token(client.get(URL))
    data = {"token": token, "code": code_on_the_worksheet(client), "answer_1": right(demo, 1)}
    client.post(URL, data)
    client.post(URL, data)
    assert Review.objects.count() == 1


@pytest.mark.parametrize(
    ("answers", "code", "message"),
    [
        ({1: "A"}, "ZZZZZZ", "is not this worksheet"),
        ({1: "A"}, " ", "Type the worksheet code"),
        ({}, None, "No answers were typed in"),
        ({1: "Q"}, None, "“Q” is not one of this question's choices"),
        ({1: "A7"}, None, "“A7” is not an answer"),
        ({1: "A,B"}, None, "This question takes one answer, but several"),
    ],
)
def test_bad_sheets_are_refused_clearly_and_nothing_is_stored(client, demo, answers, code, message):
    response = paper(client, demo, answers, code=code)
    assert response.status_code == 400
    page = unescape(response.content.decode())
    assert message in page and "Nothing was recorded." in page
    assert Review.objects.count() == 0


def test_every_answer_that_cannot_be_marked_is_named_beside_its_field_at_once(client, demo):
    response = paper(client, demo, {1: "Z", 2: "hello7", 3: "?", 4: right(demo, 4), 5: "XY"})
    assert response.status_code == 400
    html = unescape(response.content.decode())
    assert "4 answers need another look. Nothing was recorded." in html
    assert "Question 5</a>: “X”, “Y” are not among this question's choices" in html
    for position, problem in (
        (1, "“Z” is not one of"),
        (2, "“hello7” is not an answer"),
        (3, "“?”"),
    ):
        assert f'<a href="#answer-{position}">Question {position}</a>: {problem}' in html
        field = re.search(rf'<input class="letters" id="answer-{position}"[^>]*>', html).group()
        assert 'aria-invalid="true"' in field and f"answer-problem-{position}" in field
    code_field = re.search(r'<input id="paper-code"[^>]*>', html).group()
    assert "aria-invalid" not in code_field and "paper-error" not in code_field  # the code is fine
    fine = re.search(r'<input class="letters" id="answer-4"[^>]*>', html).group()
    assert "aria-invalid" not in fine and f'value="{right(demo, 4)}"' in fine  # kept as typed
    assert Review.objects.count() == 0


def test_a_sheet_printed_before_the_questions_changed_is_refused(client, demo):
    old_code = code_on_the_worksheet(client)
    question = demo.questions.get(position=4)
    question.prompt += " (reworded)"
    question.save()
    response = paper(client, demo, {1: "A"}, code=old_code)
    assert response.status_code == 400
    assert Review.objects.count() == 0


def test_each_question_has_one_small_field_saying_which_letters(client, demo):
    html = client.get(URL).content.decode()
    fields = re.findall(r'<input class="letters" id="answer-(\d)"[^>]*>', html)
    assert fields == [str(n) for n in range(1, 9)]
    assert all('size="4"' in field for field in re.findall(r'<input class="letters"[^>]*>', html))
    for question in demo.questions.all():
        last = question.labelled_choices[-1]["letter"]
        assert f'id="answer-help-{question.position}">A to {last}</span>' in html


def test_a_question_with_several_answers_asks_for_every_letter(client, demo):
    question = demo.questions.get(position=5)
    for number, choice in enumerate(question.choices):
        choice["correct"] = number < 2  # A and B
    question.save()
    html = client.get(URL).content.decode()
    assert 'id="answer-help-5">every right one of A to' in html
    response = paper(client, demo, {5: "b a"})
    assert response.status_code == 302
    assert Review.objects.get().correct


def test_a_sheet_typed_in_soon_after_the_questions_on_screen_is_told_it_is_practice(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(minutes=20), tick=False):
        form = re.sub(r"<[^>]+>", "", client.get(URL).content.decode())
        until = start + timedelta(hours=1)
        assert (
            "You answered some of these questions within the last hour: for an hour after each "
            "answer, answering it again is practice, on paper as on screen, and changes no star "
            f"(the last until {shown_moment(until)})"
        ) in form
        mistyped = paper(client, demo, {1: "Z"})  # and still says so after a mistake in it
        assert mistyped.status_code == 400
        assert "on paper as on screen" in mistyped.content.decode()
        results = client.get(paper(client, demo, {1: right(demo, 1)})["Location"])
    results_html = results.content.decode()
    assert "This sheet was practice" in results_html
    assert "Each answer counts" not in results_html  # it did not
    # The sheet's own answer was seen at 20 minutes: an hour after it, nothing is practice.
    with time_machine.travel(start + timedelta(minutes=81), tick=False):
        assert "within the last hour" not in client.get(URL).content.decode()
