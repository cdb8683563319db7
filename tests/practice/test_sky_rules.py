"""Star states at their edges, without a database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from practice import scheduling, sky
from practice.scheduling import AGAIN, GOOD, HARD, SchedulerSettings

CONFIG = SchedulerSettings(0.9, (), (), 36500, False)
NOON = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def reviewed(*ratings_and_times, graded: bool = True):
    """The memory state and evidence after scheduled reviews, as answering them stores them."""
    memory, evidence, lit_at = None, sky.NO_EVIDENCE, None
    for rating, moment in ratings_and_times:
        evidence, lit_at = sky.evidence_after(
            evidence,
            lit_at,
            rating=rating,
            graded=graded,
            previous_review=memory.last_review if memory else None,
            now=moment,
        )
        memory = scheduling.review(memory, rating, moment, CONFIG)
    return memory, evidence, lit_at


def star(reviews, now, last_rating=None):
    memory, evidence, _ = reviews
    return sky.star_state(memory, last_rating, now, CONFIG, evidence=evidence)


def test_an_unanswered_star_is_unlit():
    state = sky.star_state(None, None, NOON, CONFIG)
    assert state.word == "unlit"
    assert state.describe(NOON) == "unlit, not answered yet"


def test_a_first_right_answer_kindles_the_star_and_lights_nothing():
    reviews = reviewed((GOOD, NOON))
    state = star(reviews, NOON, GOOD)
    assert state.word == "kindled"
    assert state.describe(NOON) == "kindled, next review in 2 days"
    assert reviews[2] is None  # not lit, ever


def test_a_right_answer_the_same_day_only_keeps_it_kindled():
    reviews = reviewed((GOOD, NOON), (GOOD, NOON + timedelta(hours=23, minutes=59)))
    assert star(reviews, NOON + timedelta(hours=24), GOOD).word == "kindled"


def test_a_right_answer_a_day_after_the_review_before_lights_it_at_full_brightness():
    later = NOON + timedelta(days=1)
    memory, evidence, lit_at = reviewed((GOOD, NOON), (GOOD, later))
    state = sky.star_state(memory, GOOD, later, CONFIG, evidence=evidence)
    assert (state.word, state.brightness) == ("lit", 1.0)
    assert lit_at == later
    assert state.describe(later).startswith("lit, next review in ")


def test_the_day_counts_from_the_review_before_not_from_the_first_right_answer():
    # Right at noon, again at 20:00, and again the next noon: only 16 hours after the last look.
    reviews = reviewed(
        (GOOD, NOON), (GOOD, NOON + timedelta(hours=8)), (GOOD, NOON + timedelta(days=1))
    )
    assert reviews[1] == sky.KINDLING


def test_a_right_guess_neither_kindles_nor_lights_but_a_later_recall_does():
    guessed = reviewed((HARD, NOON))
    assert star(guessed, NOON, HARD).word == "unlit"
    assert (
        star(guessed, NOON, HARD)
        .describe(NOON)
        .startswith("unlit, not yet answered right from memory, next review in")
    )
    # Remembered a day after the guess was shown right: remembered across days.
    assert reviewed((HARD, NOON), (GOOD, NOON + timedelta(days=1)))[1] == sky.CONFIRMED
    # A guess keeps what was there: a kindled star stays kindled, a lit one lit.
    assert reviewed((GOOD, NOON), (HARD, NOON + timedelta(days=2)))[1] == sky.KINDLING
    lit_then_guessed = reviewed(
        (GOOD, NOON), (GOOD, NOON + timedelta(days=1)), (HARD, NOON + timedelta(days=3))
    )
    assert lit_then_guessed[1] == sky.CONFIRMED


def test_a_self_rated_hard_flashcard_is_remembered_and_kindles():
    reviews = reviewed((HARD, NOON), graded=False)
    assert star(reviews, NOON, HARD).word == "kindled"


def test_a_lit_star_fades_smoothly_and_is_due_exactly_when_due():
    reviews = reviewed((GOOD, NOON), (GOOD, NOON + timedelta(days=1)))
    memory = reviews[0]
    just_before = star(reviews, memory.due - timedelta(seconds=1), GOOD)
    at_due = star(reviews, memory.due, GOOD)
    assert just_before.word == "lit" and just_before.brightness < 0.01
    assert at_due.word == "due"
    hours = [memory.last_review + timedelta(hours=h) for h in range(0, 48, 6)]
    brightness = [star(reviews, t, GOOD).brightness for t in hours]
    assert brightness == sorted(brightness, reverse=True)
    assert len(set(brightness)) == len(brightness)


def test_a_miss_is_missed_until_due_then_due_and_ever_lit_stays():
    lit = NOON + timedelta(days=1)
    reviews = reviewed((GOOD, NOON), (GOOD, lit), (AGAIN, NOON + timedelta(days=5)))
    memory, evidence, lit_at = reviews
    assert (evidence, lit_at) == (sky.NO_EVIDENCE, lit)  # the evidence goes, lit_at stays
    after = NOON + timedelta(days=5, hours=1)
    state = star(reviews, after, AGAIN)
    assert state.word == "missed"
    assert state.describe(after) == "missed, back in 23 hours"
    overdue = memory.due + timedelta(days=1)
    assert star(reviews, overdue, AGAIN).describe(overdue) == (
        "due, missed last time, came due 1 day ago"
    )


def test_after_a_miss_a_right_answer_the_same_day_kindles_and_one_a_day_later_lights():
    miss = NOON + timedelta(days=5)
    same_day = reviewed(
        (GOOD, NOON),
        (GOOD, NOON + timedelta(days=1)),
        (AGAIN, miss),
        (GOOD, miss + timedelta(hours=2)),
    )
    assert star(same_day, miss + timedelta(hours=3), GOOD).word == "kindled"
    next_day = reviewed(
        (GOOD, NOON),
        (GOOD, NOON + timedelta(days=1)),
        (AGAIN, miss),
        (GOOD, miss + timedelta(days=1)),
    )
    assert next_day[1] == sky.CONFIRMED and next_day[2] == NOON + timedelta(days=1)


def test_a_due_star_says_since_when_it_is_due():
    reviews = reviewed((GOOD, NOON))
    later = reviews[0].due + timedelta(days=3)
    assert star(reviews, later, GOOD).describe(later) == "due, came due 3 days ago"


def test_evidence_of_a_log_is_what_answering_it_review_by_review_stored():
    times = [NOON + timedelta(hours=h) for h in (0, 5, 30, 80, 81, 200)]
    ratings = [GOOD, AGAIN, GOOD, GOOD, AGAIN, HARD]
    _, evidence, lit_at = reviewed(*zip(ratings, times, strict=True))
    assert sky.evidence_of(list(zip(ratings, times, strict=True)), graded=True) == (
        evidence,
        lit_at,
    )
    assert lit_at == times[2]


def test_positions_are_the_same_on_every_call():
    band = sky.regions(["computing", "music"])["music"]
    first = sky.constellation_centres(band, ["mt_aaaaaaaaaa", "mt_bbbbbbbbbb"])
    again = sky.constellation_centres(band, ["mt_bbbbbbbbbb", "mt_aaaaaaaaaa"])
    assert first == again
    assert all(band.x <= x <= band.x + band.width for x, _ in first.values())
    offsets = sky.star_offsets("mt_aaaaaaaaaa", ("a1", "b2"))
    sky.star_offsets.cache_clear()  # worked out afresh, not remembered
    assert sky.star_offsets("mt_aaaaaaaaaa", ("a1", "b2")) == offsets


@pytest.mark.parametrize("count", [1, 7, 40])
def test_constellations_of_a_region_never_share_a_place(count):
    band = sky.regions(["one"])["one"]
    ids = [f"mt_{n:010d}" for n in range(count)]
    centres = sky.constellation_centres(band, ids)
    assert len(set(centres.values())) == count


def test_forecast_counts_each_day_from_today_with_the_overdue_under_today():
    dues = [
        NOON + timedelta(hours=1),
        NOON + timedelta(days=1),
        NOON + timedelta(days=1, hours=2),
        NOON - timedelta(days=1),
        NOON - timedelta(days=30),
        NOON + timedelta(days=20),
    ]
    days = sky.forecast(dues, NOON)
    assert len(days) == 14
    assert [count for _, count in days[:3]] == [3, 2, 0]
    assert sum(count for _, count in days) == 5
