"""Every bad submission gets a 400 that says what was wrong, and nothing is stored."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import signing
from django.test import Client
from django.utils import timezone

from practice import submissions
from practice.models import Learner, Memory, Review, Round
from tests.factories import make_lesson
from tests.practice.helpers import (
    asked_question,
    current_question,
    form_token,
    practice_url,
    right_choices,
)


def assert_rejected(response, message: str) -> None:
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html, html[:3000]
    assert "Nothing was recorded." in html
    assert Review.objects.count() == 0
    assert Memory.objects.count() == 0
    assert Round.objects.count() == 0


@pytest.mark.parametrize(
    ("token_lesson", "token_question", "message"),
    [
        ("this", "unknown", "not for a question of this lesson"),
        ("other", "other", "belongs to a question of another lesson"),
        ("this", "other", "not for a question of this lesson"),
    ],
    ids=["unknown question", "another lesson's token", "another lesson's question"],
)
def test_a_token_for_a_question_that_is_not_this_lessons_is_refused(
    client, demo, token_lesson, token_question, message
):
    current_question(client, practice_url(demo))  # the round exists
    other = make_lesson(title="Other", slug="other")
    question_id = other.questions.get(position=1).pk if token_question == "other" else 999999
    token = submissions.issue_for_round(
        lesson_id=(demo if token_lesson == "this" else other).pk,
        question_id=question_id,
        round_key="k",
        step=0,
    )
    assert_rejected(client.post(practice_url(demo), {"token": token, "choice": "A"}), message)


def test_a_choice_that_is_not_the_questions_is_refused(client, demo):
    _, token = current_question(client, practice_url(demo))
    assert_rejected(
        client.post(practice_url(demo), {"token": token, "choice": "Z"}),
        "That answer names a choice this question does not have",
    )


def test_a_missing_choice_is_refused(client, demo):
    _, token = current_question(client, practice_url(demo))
    assert_rejected(client.post(practice_url(demo), {"token": token}), "No answer was chosen")


def test_two_choices_for_a_one_answer_question_are_refused(client, demo):
    question, token = current_question(client, practice_url(demo))
    choices = question.choices
    assert_rejected(
        client.post(practice_url(demo), {"token": token, "choice": [c["id"] for c in choices[:2]]}),
        "takes one answer",
    )


def test_a_missing_token_is_refused(client, demo):
    assert_rejected(client.post(practice_url(demo), {"choice": "A"}), "had no attempt token")


def test_a_tampered_token_is_refused(client, demo):
    _, token = current_question(client, practice_url(demo))
    payload, rest = token.split(":", 1)
    tampered = payload[:-2] + ("AA" if not payload.endswith("AA") else "BB") + ":" + rest
    assert_rejected(
        client.post(practice_url(demo), {"token": tampered, "choice": "A"}), "changed or damaged"
    )


def test_a_token_in_the_wrong_shape_is_refused(client, demo):
    token = signing.dumps({"l": demo.pk}, salt=submissions.SALT)
    assert_rejected(
        client.post(practice_url(demo), {"token": token, "choice": "A"}), "not one this site makes"
    )


def test_an_expired_token_is_refused(client, demo, settings):
    _, token = current_question(client, practice_url(demo))
    settings.ATTEMPT_TOKEN_MAX_AGE = -1
    assert_rejected(client.post(practice_url(demo), {"token": token, "choice": "A"}), "too old")


def test_a_token_read_a_moment_ago_is_refused_once_it_is_too_old(client, demo, settings):
    # An answer's token is read twice per request; the second read may reuse the first's.
    question, token = current_question(client, practice_url(demo))
    data = {"token": token, "choice": right_choices(question)}
    assert client.post(practice_url(demo), data).status_code == 302
    later = timezone.now() + timedelta(seconds=settings.ATTEMPT_TOKEN_MAX_AGE + 1)
    with time_machine.travel(later, tick=False):
        response = client.post(practice_url(demo), data)
    assert response.status_code == 400
    assert "too old" in response.content.decode()


def test_a_token_for_a_later_step_is_stale(client, demo):
    question = demo.questions.get(position=3)
    token = submissions.issue_for_round(
        lesson_id=demo.pk, question_id=question.pk, round_key="new-round", step=2
    )
    response = client.post(practice_url(demo), {"token": token, "choice": "A"})
    assert response.status_code == 400
    assert "already answered in this round, or is not the one being asked now" in (
        response.content.decode()
    )
    assert Review.objects.count() == 0


def test_htmx_bad_input_swaps_an_error_card(client, demo):
    _, token = current_question(client, practice_url(demo))
    response = client.post(
        practice_url(demo), {"token": token, "choice": "Z"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "<html" not in html
    assert '<section id="practice-card"' in html


def test_without_a_csrf_token_the_answer_is_forbidden(demo):
    browser = Client(enforce_csrf_checks=True)
    question, token = current_question(browser, practice_url(demo))
    response = browser.post(
        practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
    )
    assert response.status_code == 403
    assert "This form could not be accepted" in response.content.decode()
    assert Review.objects.count() == 0
    assert Learner.objects.count() == 0


def test_with_the_csrf_token_the_answer_is_accepted(demo):
    browser = Client(enforce_csrf_checks=True)
    response = browser.get(practice_url(demo))
    question, token = asked_question(response), form_token(response)
    csrf = response.cookies["csrftoken"].value
    response = browser.post(
        practice_url(demo),
        {"token": token, "choice": sorted(question.correct_ids), "csrfmiddlewaretoken": csrf},
    )
    assert response.status_code == 302
    assert Review.objects.count() == 1


@pytest.mark.parametrize("method", ["put", "delete", "patch"])
def test_other_methods_are_not_allowed(client, demo, method):
    assert getattr(client, method)(practice_url(demo)).status_code == 405
