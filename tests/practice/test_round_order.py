"""Later rounds ask first what memory needs most; the first follows the lesson."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.utils import timezone

from tests.practice.helpers import current_question, finish_round, practice_url


def asked_order(client, lesson) -> list[int]:
    """The positions a fresh round asks, answering each right to move on."""
    positions = []
    url = practice_url(lesson) + "?new=1"
    for _ in range(8):
        question, token = current_question(client, url)
        positions.append(question.position)
        client.post(practice_url(lesson), {"token": token, "choice": sorted(question.correct_ids)})
        url = practice_url(lesson)
    return positions


def test_the_first_round_follows_the_lesson(client, demo):
    assert asked_order(client, demo) == list(range(1, 9))


def test_the_next_round_asks_the_missed_questions_first(client, demo):
    finish_round(client, demo, [True, True, False, True, False, True, True, True, True, True])
    order = asked_order(client, demo)
    assert order[:2] == [3, 5]
    assert sorted(order) == list(range(1, 9))


def test_days_later_the_least_remembered_come_first_and_the_order_holds_all_round(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=1), tick=False):
        finish_round(client, demo, [True, True, True, True, False, True, True, True, True])
    with time_machine.travel(start + timedelta(days=3), tick=False):
        order = asked_order(client, demo)
    # Question 5 was missed a day after the others were last reviewed: it comes first.
    assert order[0] == 5 and sorted(order) == list(range(1, 9))


def test_a_question_falling_due_between_showing_and_answering_leaves_the_round_as_shown(
    client, demo
):
    """A new round starts with its first answer, in the order its first question was shown in:
    an item that falls due in between must not make that answer "not the one being asked"."""
    from practice.models import Memory

    finish_round(client, demo, [True] * 8)
    soon = timezone.now() + timedelta(seconds=30)
    Memory.objects.filter(question__position=1).update(due=soon)
    # The others are not due either, but remembered less surely than question 1.
    Memory.objects.exclude(question__position=1).update(
        due=soon + timedelta(days=5), last_review=soon - timedelta(days=3), stability=1.0
    )
    question, token = current_question(client, practice_url(demo) + "?new=1")
    assert question.position == 2  # question 1 is not due yet, and remembered best of all
    with time_machine.travel(soon + timedelta(seconds=30)):  # now question 1 is due
        response = client.post(
            practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
        )
    assert response.status_code == 302
    next_question, _ = current_question(client, practice_url(demo))
    assert next_question.position != 2
