"""Star states at their edges, without a database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from practice import scheduling, sky
from practice.scheduling import AGAIN, GOOD, HARD, SchedulerSettings

CONFIG = SchedulerSettings(0.9, (), (), 36500, False)
NOON = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def reviewed(*ratings_and_times):
    memory = None
    for rating, moment in ratings_and_times:
        memory = scheduling.review(memory, rating, moment, CONFIG)
    return memory


def test_an_unanswered_star_is_dark():
    state = sky.star_state(None, None, NOON, CONFIG)
    assert state.word == "dark"
    assert state.describe(NOON) == "dark, not answered right yet"


def test_a_right_answer_lights_the_star_at_full_brightness():
    memory = reviewed((GOOD, NOON))
    state = sky.star_state(memory, GOOD, NOON, CONFIG)
    assert (state.word, state.brightness) == ("lit", 1.0)
    assert state.describe(NOON) == "lit, next review in 2 days"


def test_hard_is_a_pass_and_lights_the_star():
    memory = reviewed((HARD, NOON))
    assert sky.star_state(memory, HARD, NOON, CONFIG).word == "lit"


def test_a_lit_star_fades_smoothly_and_dims_exactly_when_due():
    memory = reviewed((GOOD, NOON))
    just_before = sky.star_state(memory, GOOD, memory.due - timedelta(seconds=1), CONFIG)
    at_due = sky.star_state(memory, GOOD, memory.due, CONFIG)
    assert just_before.word == "lit" and just_before.brightness < 0.01
    assert at_due.word == "dim"
    hours = [memory.last_review + timedelta(hours=h) for h in range(0, 48, 6)]
    brightness = [sky.star_state(memory, GOOD, t, CONFIG).brightness for t in hours]
    assert brightness == sorted(brightness, reverse=True)
    assert len(set(brightness)) == len(brightness)


def test_a_lapse_darkens_the_star_until_it_is_answered_right():
    memory = reviewed((GOOD, NOON), (AGAIN, NOON + timedelta(days=3)))
    after = NOON + timedelta(days=3, hours=1)
    state = sky.star_state(memory, AGAIN, after, CONFIG)
    assert state.word == "dark"
    assert state.describe(after).startswith("dark, missed last time, back in")
    overdue = sky.star_state(memory, AGAIN, memory.due + timedelta(days=1), CONFIG)
    assert overdue.word == "dark"
    assert overdue.describe(memory.due + timedelta(days=1)).endswith("due for review now")


def test_a_dim_star_says_since_when_it_is_due():
    memory = reviewed((GOOD, NOON))
    later = memory.due + timedelta(days=3)
    assert sky.star_state(memory, GOOD, later, CONFIG).describe(later) == (
        "dim, due for review 3 days ago"
    )


def test_positions_are_the_same_on_every_call():
    band = sky.regions(["computing", "music"])["music"]
    first = sky.constellation_centres(band, ["mt_aaaaaaaaaa", "mt_bbbbbbbbbb"])
    again = sky.constellation_centres(band, ["mt_bbbbbbbbbb", "mt_aaaaaaaaaa"])
    assert first == again
    assert all(band.x <= x <= band.x + band.width for x, _ in first.values())
    assert sky.star_offsets("mt_aaaaaaaaaa", ["a1", "b2"]) == sky.star_offsets(
        "mt_aaaaaaaaaa", ["a1", "b2"]
    )


@pytest.mark.parametrize("count", [1, 7, 40])
def test_constellations_of_a_region_never_share_a_place(count):
    band = sky.regions(["one"])["one"]
    ids = [f"mt_{n:010d}" for n in range(count)]
    centres = sky.constellation_centres(band, ids)
    assert len(set(centres.values())) == count


def test_forecast_counts_each_day_from_today():
    dues = [
        NOON + timedelta(hours=1),
        NOON + timedelta(days=1),
        NOON + timedelta(days=1, hours=2),
        NOON - timedelta(days=1),
        NOON + timedelta(days=20),
    ]
    days = sky.forecast(dues, NOON)
    assert len(days) == 14
    assert [count for _, count in days[:3]] == [1, 2, 0]
    assert sum(count for _, count in days) == 3
