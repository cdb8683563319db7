"""Star states at their edges, without a database."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from practice import scheduling, sky
from practice.scheduling import AGAIN, GOOD, HARD, SchedulerSettings

CONFIG = SchedulerSettings(0.9, (), (), 36500, False)
NOON = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


FOUR_CHOICES = sky.guess_rate(4, several=False)
RIGHT, WRONG, GUESSED = sky.Outcome


def answered(*outcomes_and_times, guess_rate: float = FOUR_CHOICES):
    """The memory state and evidence after scheduled answers, as answering them stores them:
    the evidence first, then the scheduler's state, then the due kept short until lit."""
    memory, evidence = None, sky.Evidence()
    for outcome, moment in outcomes_and_times:
        evidence = evidence.after(outcome, guess_rate=guess_rate, now=moment)
        rating = scheduling.rating_for_answer(outcome == RIGHT, guessed=outcome == GUESSED)
        memory = scheduling.review(memory, rating, moment, CONFIG)
        due = sky.due_until_lit(memory.due, memory.last_review, evidence.level)
        memory = dataclasses.replace(memory, due=due)
    return memory, evidence


def star(answers, now):
    memory, evidence = answers
    return sky.star_state(memory, now, CONFIG, evidence=evidence.level, missed=evidence.missed)


def days(*numbers: float) -> list[datetime]:
    return [NOON + timedelta(days=n) for n in numbers]


def test_an_unanswered_star_is_unlit():
    state = sky.star_state(None, NOON, CONFIG)
    assert (state.word, state.words) == ("unlit", ["unlit"])
    assert state.describe(NOON) == "unlit, not answered yet"


def test_a_first_right_answer_kindles_the_star_and_lights_nothing():
    answers = answered((RIGHT, NOON))
    state = star(answers, NOON)
    assert state.word == "kindled"
    assert state.describe(NOON) == "kindled: next review in 2 days"
    assert answers[1].lit_at is None


def test_three_right_answers_over_two_days_light_a_four_choice_star():
    """Two right answers are not enough whatever the days between (a guesser gets two in a row
    one time in sixteen); the third lights it, on a run spanning a day or more."""
    two = answered(*((RIGHT, moment) for moment in days(0, 3)))
    assert star(two, days(3)[0]).word == "kindled"
    three = answered(*((RIGHT, moment) for moment in days(0, 3, 6)))
    state = star(three, days(6)[0])
    assert (state.word, state.brightness) == ("lit", 1.0)
    assert three[1].lit_at == days(6)[0]
    assert state.describe(days(6)[0]).startswith("lit: next review in ")


def test_right_answers_all_on_one_day_never_light_it():
    same_day = answered(*((RIGHT, NOON + timedelta(hours=h)) for h in range(0, 20, 4)))
    assert same_day[1].score > sky.LIGHT_SCORE
    assert star(same_day, NOON + timedelta(hours=20)).word == "kindled"


def test_a_question_with_more_choices_needs_fewer_right_answers():
    several = sky.guess_rate(4, several=True)  # every right one of four: 1 in 15 at random
    assert several == 1 / 15
    two = answered(*((RIGHT, moment) for moment in days(0, 2)), guess_rate=several)
    assert star(two, days(2)[0]).word == "lit"


def test_a_right_answer_right_after_a_miss_never_lights_it_by_itself():
    lit = answered(*((RIGHT, moment) for moment in days(0, 2, 5, 12, 30)))
    # strong evidence before the miss, more than one miss takes away
    assert lit[1].score > sky.LIGHT_SCORE + 2
    missed = answered(*((RIGHT, m) for m in days(0, 2, 5, 12, 30)), (WRONG, days(60)[0]))
    after_miss = answered(
        *((RIGHT, m) for m in days(0, 2, 5, 12, 30)), (WRONG, days(60)[0]), (RIGHT, days(61)[0])
    )
    assert star(missed, days(60)[0]).words == ["unlit", "missed"]
    assert star(after_miss, days(61)[0]).word == "kindled"
    relit = answered(
        *((RIGHT, m) for m in days(0, 2, 5, 12, 30)),
        (WRONG, days(60)[0]),
        (RIGHT, days(61)[0]),
        (RIGHT, days(62)[0]),
    )
    assert star(relit, days(62)[0]).word == "lit" and relit[1].lit_at == days(5)[0]


def test_a_declared_guess_is_no_evidence_and_no_miss_and_comes_back_as_a_miss_would():
    guessed = answered((GUESSED, NOON))
    state = star(guessed, NOON)
    assert (state.word, state.missed, guessed[1].score) == ("unlit", False, 0.0)
    wrong = answered((WRONG, NOON))
    assert guessed[0].due == wrong[0].due  # never a longer interval than a wrong answer
    # A guess breaks the run of right answers: the next right one only kindles.
    broken = answered(*((RIGHT, m) for m in days(0, 2)), (GUESSED, days(4)[0]), (RIGHT, days(5)[0]))
    assert star(broken, days(5)[0]).word == "kindled"


def test_a_guess_on_a_mature_item_never_stretches_its_interval():
    history = [(RIGHT, moment) for moment in days(0, 2, 5, 12, 30, 80)]
    guessed = answered(*history, (GUESSED, days(200)[0]))
    wrong = answered(*history, (WRONG, days(200)[0]))
    right = answered(*history, (RIGHT, days(200)[0]))
    assert guessed[0].due <= wrong[0].due < right[0].due


def test_a_self_rated_flashcard_reads_as_a_question_with_a_third_chance_of_luck():
    rated = answered((RIGHT, NOON), guess_rate=sky.FLASHCARD_GUESS_RATE)
    assert star(rated, NOON).word == "kindled"


def test_until_lit_an_item_comes_back_within_three_days():
    two = answered(*((RIGHT, moment) for moment in days(0, 2)))
    assert two[0].due - two[0].last_review <= sky.UNLIT_MAX_INTERVAL
    lit = answered(*((RIGHT, moment) for moment in days(0, 2, 5)))
    assert lit[0].due - lit[0].last_review > sky.UNLIT_MAX_INTERVAL


def test_a_lit_star_fades_smoothly_and_stays_lit_when_it_comes_due():
    answers = answered(*((RIGHT, moment) for moment in days(0, 2, 5)))
    memory = answers[0]
    just_before = star(answers, memory.due - timedelta(seconds=1))
    at_due = star(answers, memory.due)
    assert just_before.word == "lit" and just_before.brightness < 0.01 and not just_before.is_due
    assert (at_due.word, at_due.is_due, at_due.words) == ("lit", True, ["lit", "due"])
    hours = [memory.last_review + timedelta(hours=h) for h in range(0, 48, 6)]
    brightness = [star(answers, t).brightness for t in hours]
    assert brightness == sorted(brightness, reverse=True)
    assert len(set(brightness)) == len(brightness)


def test_a_kindled_star_fades_as_a_lit_one_does():
    """A kindled star long overdue was drawn at full strength, brighter than the lit stars
    beside it (outside learner review)."""
    answers = answered((RIGHT, NOON))
    memory = answers[0]
    assert star(answers, NOON).brightness == 1.0
    overdue = star(answers, memory.due + timedelta(days=16))
    assert (overdue.word, overdue.brightness, overdue.is_due) == ("kindled", 0.0, True)


def test_a_miss_is_missed_and_due_says_since_when():
    answers = answered(*((RIGHT, m) for m in days(0, 2, 5)), (WRONG, days(9)[0]))
    memory, evidence = answers
    assert (evidence.level, evidence.lit_at, evidence.missed) == (
        sky.NO_EVIDENCE,
        days(5)[0],
        True,
    )
    after = days(9)[0] + timedelta(hours=1)
    assert star(answers, after).describe(after) == "unlit, missed: next review in 2 days"
    overdue = memory.due + timedelta(days=1)
    assert star(answers, overdue).describe(overdue) == ("unlit, due, missed: came due 1 day ago")
    # Just under a day reads as a day, as just over one does: not "24 hours" on one page and
    # "1 day" on the next.
    for gap in (timedelta(hours=23, minutes=40), timedelta(hours=24, minutes=20)):
        moment = memory.due - gap
        assert star(answers, moment).describe(moment).endswith(": next review in 1 day")


def test_evidence_of_a_log_is_what_answering_it_one_by_one_stored():
    outcomes = [RIGHT, WRONG, RIGHT, RIGHT, GUESSED, RIGHT, RIGHT]
    log = list(zip(outcomes, days(0, 0.2, 1, 3, 3.1, 4, 6), strict=True))
    assert sky.evidence_of(log, guess_rate=FOUR_CHOICES) == answered(*log)[1]


def test_a_stored_review_reads_as_the_outcome_it_was():
    assert sky.outcome_of(GOOD, True) == RIGHT
    assert sky.outcome_of(AGAIN, False) == WRONG
    assert sky.outcome_of(AGAIN, True) == GUESSED
    assert sky.outcome_of(HARD, True) == GUESSED  # a guess rated before guesses were lapses
    assert sky.outcome_of(HARD, None) == RIGHT  # a flashcard the learner recalled with effort
    assert sky.outcome_of(AGAIN, None) == WRONG


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


@pytest.mark.parametrize(
    "guess_rate",
    [
        sky.guess_rate(2, several=False),
        FOUR_CHOICES,
        sky.guess_rate(5, several=False),
        sky.guess_rate(3, several=True),
        sky.FLASHCARD_GUESS_RATE,
    ],
)
def test_what_a_verdict_says_lighting_takes_is_exactly_what_lights_the_star(guess_rate):
    """After any history of up to four answers, an hour or a day apart, a verdict says how many
    more right answers in a row light the star (sky.answers_to_light) and from when the last
    may come (sky.lights_from; with no run begun, a day after the first of them). Given so, an
    hour apart until the last, they light it at the last and not before; the last an hour
    early, they do not."""
    steps = list(itertools.product(sky.Outcome, (timedelta(hours=1), timedelta(hours=25))))
    histories = [h for length in range(5) for h in itertools.product(steps, repeat=length)]
    checked = 0
    for history in histories:
        moment, evidence = NOON, sky.Evidence()
        for outcome, gap in history:
            moment += gap
            evidence = evidence.after(outcome, guess_rate=guess_rate, now=moment)
        needed = sky.answers_to_light(evidence, guess_rate)
        if evidence.level == sky.CONFIRMED:
            assert needed is None and sky.lights_from(evidence) is None
            continue
        for early in (False, True):
            after, at = evidence, moment
            first = at + timedelta(hours=1)
            last_from = sky.lights_from(evidence) or first + sky.CONFIRMATION_GAP
            for answer in range(1, needed + 1):
                at += timedelta(hours=1)
                if answer == needed:
                    at = max(at, last_from - (timedelta(hours=1) if early else timedelta(0)))
                after = after.after(RIGHT, guess_rate=guess_rate, now=at)
                lit = after.level == sky.CONFIRMED
                expected = answer == needed and (not early or at >= last_from)
                assert lit == expected, (history, needed, answer, early)
        checked += 1
    assert checked > 100
