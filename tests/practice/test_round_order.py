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
