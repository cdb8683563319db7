"""One grading rule: the round, the review, paper answers and the API answer every input alike."""

from __future__ import annotations

import html
import json

import pytest
from django.test import Client

from lessons.models import Question
from practice.models import Review
from tests.factories import make_lesson, make_question
from tests.practice.helpers import current_question, form_token, practice_url


def api_check(lesson, question: Question, letters: list[str]):
    url = f"/api/v1/lessons/{lesson.public_id}/questions/{question.position}/check"
    return Client().post(url, json.dumps({"answer": letters}), content_type="application/json")


def round_check(client: Client, lesson, letters: list[str]):
    """The round's form sends the choices' identities: these letters (as written) become the
    identities of the choices they name; a letter that names none is sent as it is."""
    question, token = current_question(client, practice_url(lesson))
    ids = {c["letter"]: c["id"] for c in question.labelled_choices}
    choices = [ids.get(letter.upper(), letter) for letter in letters]
    return question, client.post(practice_url(lesson), {"token": token, "choice": choices})


def paper_check(client: Client, lesson, question: Question, letters: list[str]):
    url = lesson.get_absolute_url() + "/worksheet/answers"
    page = client.get(url)
    return client.post(
        url,
        {
            "token": form_token(page),
            "code": lesson.worksheet_code(list(lesson.questions.all())),
            f"answer_{question.position}": ",".join(letters) or " ",
        },
    )


@pytest.mark.parametrize(
    ("letters", "message", "round_message"),
    [
        (
            ["Z"],
            "“Z” is not one of this question's choices (they are A, B, C, D).",
            # The round's form names choices by identity, never by letter.
            "That answer names a choice this question does not have",
        ),
        (["A", "B"], *["This question takes one answer, but several were given."] * 2),
    ],
    ids=["unknown letter", "two letters for one answer"],
)
def test_a_bad_answer_is_refused_alike_everywhere(client, demo, letters, message, round_message):
    question, in_round = round_check(client, demo, letters)
    assert not question.takes_several
    assert in_round.status_code == 400
    assert round_message in html.unescape(in_round.content.decode())
    from_api = api_check(demo, question, letters)
    assert from_api.status_code == 400
    assert from_api.json() == {"detail": message}
    on_paper = paper_check(client, demo, question, letters)
    assert on_paper.status_code == 400
    on_paper_page = html.unescape(on_paper.content.decode())
    assert f'<a href="#answer-{question.position}">Question {question.position}</a>: {message}' in (
        on_paper_page
    )


def test_an_empty_answer_is_refused_by_the_round_and_the_api(client, demo):
    question, in_round = round_check(client, demo, [])
    assert in_round.status_code == 400
    message = "No answer was chosen. Pick one of the choices, then submit."
    assert message in in_round.content.decode()
    assert api_check(demo, question, []).json() == {"detail": message}


def test_the_round_and_the_api_grade_a_right_and_a_wrong_answer_alike(client, demo):
    question, _ = current_question(client, practice_url(demo))
    right = [letter.lower() for letter in question.correct_letters]  # letters in any case
    assert api_check(demo, question, right).json()["correct"] is True
    wrong = next(c["letter"] for c in question.labelled_choices if not c["correct"])
    assert api_check(demo, question, [wrong]).json()["correct"] is False
    _, response = round_check(client, demo, right)
    assert response.status_code == 302
    assert client.get(response["Location"]).context["feedback"]["review"].correct is True


# Every question of this lesson takes two answers: A and B are right, C and D wrong.
TWO_RIGHT_CHOICES = [
    {"text": "A right one", "correct": True, "explanation": ""},
    {"text": "Another right one", "correct": True, "explanation": ""},
    {"text": "A wrong one", "correct": False, "explanation": "Because it is wrong."},
    {"text": "Another wrong one", "correct": False, "explanation": "It is not the one."},
]


def lesson_whose_questions_take_two_answers():
    lesson = make_lesson(questions=0)
    for position in range(1, 9):
        choices = [dict(choice) for choice in TWO_RIGHT_CHOICES]
        make_question(lesson, position=position, choices=choices)
    return lesson


@pytest.mark.parametrize(
    ("letters", "right"),
    [(["A", "B"], True), (["A"], False), (["B"], False), (["A", "B", "C"], False)],
    ids=["every right one", "part of the right ones", "the other part", "every right one and more"],
)
def test_a_several_answer_question_is_right_only_with_every_right_choice_and_no_other(
    client, db, letters, right
):
    """Picking some of the right choices, or all of them and a wrong one, is wrong: in the
    round (its verdict and its stored review), on paper and through the API alike."""
    lesson = lesson_whose_questions_take_two_answers()
    question, in_round = round_check(client, lesson, letters)
    assert question.takes_several and question.correct_letters == ["A", "B"]
    assert in_round.status_code == 302
    verdict = client.get(in_round["Location"]).content.decode()
    with_a_pen = Client()
    on_paper = paper_check(with_a_pen, lesson, question, letters)
    assert on_paper.status_code == 302
    results = with_a_pen.get(on_paper["Location"]).content.decode()
    graded_right = {
        "round's verdict": "Right</h2>" in verdict and "Not quite" not in verdict,
        "round's review": Review.objects.filter(question=question).earliest("pk").correct,
        "paper": "1 of 1 right" in results and "0 of 1 right" not in results,
        "API": api_check(lesson, question, letters).json()["correct"],
    }
    assert graded_right == dict.fromkeys(graded_right, right)


def test_the_markdown_twin_says_which_questions_take_every_right_answer(client, db):
    """The editors' walk of 2026-12-06: the page says "Choose every answer that applies" and
    the twin an agent reads did not, though the API grades the same way."""
    several = client.get(lesson_whose_questions_take_two_answers().get_absolute_url() + ".md")
    assert several.content.decode().count("Choose every answer that applies.") == 8
    single = client.get(make_lesson(slug="one-answer").get_absolute_url() + ".md")
    assert single.status_code == 200 and b"Choose every answer" not in single.content
