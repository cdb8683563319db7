"""The scheduling module on its own: no database, no request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from practice import scheduling
from practice.scheduling import AGAIN, EASY, GOOD, HARD, REVIEW, SchedulerSettings

CONFIG = SchedulerSettings(
    desired_retention=0.9,
    learning_steps=(),
    relearning_steps=(),
    maximum_interval=36500,
    enable_fuzzing=False,
)
NOON = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_graded_answers_map_wrong_to_again_and_right_to_good():
    assert scheduling.rating_for_answer(False) == AGAIN == 1
    assert scheduling.rating_for_answer(True) == GOOD == 3
    assert (HARD, EASY) == (2, 4)


def test_a_first_right_answer_comes_back_days_later_not_minutes():
    memory = scheduling.review(None, GOOD, NOON, CONFIG)
    assert memory.state == REVIEW
    assert memory.last_review == NOON
    assert memory.due - NOON >= timedelta(days=1)


def test_a_first_wrong_answer_is_due_again_the_next_day():
    memory = scheduling.review(None, AGAIN, NOON, CONFIG)
    assert memory.due - NOON == timedelta(days=1)
    assert memory.stability < scheduling.review(None, GOOD, NOON, CONFIG).stability


def test_easier_ratings_give_longer_intervals():
    intervals = [scheduling.review(None, r, NOON, CONFIG).due - NOON for r in (HARD, GOOD, EASY)]
    assert intervals == sorted(intervals)
    assert intervals[0] < intervals[2]


def test_a_lapse_after_a_pass_shortens_the_interval():
    learned = scheduling.review(None, GOOD, NOON, CONFIG)
    later = learned.due
    passed_again = scheduling.review(learned, GOOD, later, CONFIG)
    lapsed = scheduling.review(learned, AGAIN, later, CONFIG)
    assert lapsed.due - later < passed_again.due - later
    assert lapsed.stability < learned.stability < passed_again.stability


def test_times_come_back_in_utc_whatever_zone_goes_in():
    paris = NOON.astimezone(ZoneInfo("Europe/Paris"))
    memory = scheduling.review(None, GOOD, paris, CONFIG)
    assert memory.last_review.tzinfo is UTC
    assert memory.last_review == NOON
    assert memory.due.tzinfo is UTC


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError, match="Naive"):
        scheduling.review(None, GOOD, datetime(2026, 3, 1, 12, 0), CONFIG)


def test_an_impossible_rating_is_refused():
    with pytest.raises(ValueError, match="1 to 4"):
        scheduling.review(None, 5, NOON, CONFIG)


def test_retrievability_is_certain_at_review_and_falls_smoothly_within_a_day():
    memory = scheduling.review(None, GOOD, NOON, CONFIG)
    values = [
        scheduling.retrievability(memory, NOON + timedelta(hours=hours), CONFIG)
        for hours in (0, 6, 12, 18, 24)
    ]
    assert values[0] == pytest.approx(1.0)
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == 5  # py-fsrs's whole days would give the same value all day


def test_retrievability_at_the_due_date_is_near_the_desired_retention():
    memory = scheduling.review(None, GOOD, NOON, CONFIG)
    value = scheduling.retrievability(memory, memory.due, CONFIG)
    assert 0.85 < value < 0.95


def test_retrievability_of_an_unseen_item_is_zero():
    assert scheduling.retrievability(None, NOON, CONFIG) == 0.0


def test_replay_reproduces_the_reviewed_state():
    times = [NOON, NOON + timedelta(minutes=5), NOON + timedelta(days=3), NOON + timedelta(days=9)]
    memory = None
    for rating, moment in zip((AGAIN, GOOD, GOOD, HARD), times, strict=True):
        memory = scheduling.review(memory, rating, moment, CONFIG)
    replayed = scheduling.replay(list(zip((AGAIN, GOOD, GOOD, HARD), times, strict=True)), CONFIG)
    assert replayed == memory


def test_settings_describe_themselves_for_the_export():
    described = CONFIG.as_dict()
    assert described["learning_steps"] == [] and described["relearning_steps"] == []
    assert described["desired_retention"] == 0.9
    assert len(described["parameters"]) == 21


def test_a_right_answer_marked_as_guessed_is_scheduled_as_a_lapse_as_a_wrong_one_is():
    """A declared guess is not a memory: it is rated Again, as a wrong answer is, so it never
    gets a longer interval than a wrong answer would (the star shows no miss for it)."""
    assert scheduling.rating_for_answer(True, guessed=True) == AGAIN
    assert scheduling.rating_for_answer(True, guessed=False) == GOOD
    assert scheduling.rating_for_answer(False, guessed=True) == AGAIN
    assert scheduling.rating_for_answer(False) == AGAIN
