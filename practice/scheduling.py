"""Spaced repetition for LightMySky: the only module that imports `fsrs`.

It turns a stored memory state into an `fsrs.Card`, reviews it and hands back plain values; it
knows nothing of the database or of requests.

Learning steps. py-fsrs's default learning steps (1 and 10 minutes) would keep a freshly answered
item in the Learning state and bring it back within minutes. A practice round already does that
short-term repetition itself: a missed question comes back once at the end of the round. So the
scheduler has no learning or relearning steps by default: a first right answer (`Good`) moves the
item straight to the Review state with an interval of days (about two with the default
parameters), which kindles its star at once (practice.sky says when it lights), and a lapse comes
back the next day rather than in ten minutes, when the learner has long left the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from django.conf import settings
from fsrs import Card, Rating, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

AGAIN, HARD, GOOD, EASY = (int(r) for r in (Rating.Again, Rating.Hard, Rating.Good, Rating.Easy))
RATINGS = {AGAIN: "Again", HARD: "Hard", GOOD: "Good", EASY: "Easy"}
LEARNING, REVIEW, RELEARNING = (int(s) for s in (State.Learning, State.Review, State.Relearning))
STATES = {LEARNING: "learning", REVIEW: "review", RELEARNING: "relearning"}


PARAMETERS = tuple(DEFAULT_PARAMETERS)


@dataclass(frozen=True)
class SchedulerSettings:
    desired_retention: float
    learning_steps: tuple[int, ...]  # seconds
    relearning_steps: tuple[int, ...]  # seconds
    maximum_interval: int  # days
    enable_fuzzing: bool
    parameters: tuple[float, ...] = PARAMETERS

    @classmethod
    def from_django(cls) -> SchedulerSettings:
        return cls(
            desired_retention=settings.FSRS_DESIRED_RETENTION,
            learning_steps=tuple(settings.FSRS_LEARNING_STEPS),
            relearning_steps=tuple(settings.FSRS_RELEARNING_STEPS),
            maximum_interval=settings.FSRS_MAXIMUM_INTERVAL,
            enable_fuzzing=settings.FSRS_ENABLE_FUZZING,
        )

    def as_dict(self) -> dict:
        return {
            "desired_retention": self.desired_retention,
            "learning_steps": list(self.learning_steps),
            "relearning_steps": list(self.relearning_steps),
            "maximum_interval": self.maximum_interval,
            "parameters": list(self.parameters),
        }


@dataclass(frozen=True)
class MemoryState:
    """What the scheduler knows about one learner's memory of one item."""

    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None


@lru_cache(maxsize=8)
def _scheduler(config: SchedulerSettings) -> Scheduler:
    return Scheduler(
        parameters=config.parameters,
        desired_retention=config.desired_retention,
        learning_steps=tuple(timedelta(seconds=s) for s in config.learning_steps),
        relearning_steps=tuple(timedelta(seconds=s) for s in config.relearning_steps),
        maximum_interval=config.maximum_interval,
        enable_fuzzing=config.enable_fuzzing,
    )


def utc(moment: datetime) -> datetime:
    """The same instant with `datetime.timezone.utc`, the only zone py-fsrs accepts."""
    if moment.tzinfo is None:
        raise ValueError("Naive datetimes are not allowed: every time is UTC and aware.")
    return moment.astimezone(UTC)


def rating_for_answer(correct: bool, *, guessed: bool = False) -> int:
    """Graded questions: a right answer is `Good`; a wrong one, and a right one the learner
    says they guessed, `Again`. A guess is not a memory, so it is scheduled as a lapse and never
    stretches the interval as `Hard` would (the star shows no miss for it: sky.Outcome)."""
    return GOOD if correct and not guessed else AGAIN


def review(
    memory: MemoryState | None,
    rating: int,
    now: datetime,
    config: SchedulerSettings | None = None,
) -> MemoryState:
    """The memory state after reviewing an item (None: never reviewed) with this rating."""
    if rating not in RATINGS:
        raise ValueError(f"A rating is 1 to 4, not {rating!r}.")
    scheduler = _scheduler(config or SchedulerSettings.from_django())
    now = utc(now)
    # A fixed card id: py-fsrs would otherwise sleep a millisecond to make one up.
    card = Card(card_id=0, due=now)
    if memory is not None:
        card = Card(
            card_id=0,
            state=State(memory.state),
            step=memory.step,
            stability=memory.stability,
            difficulty=memory.difficulty,
            due=utc(memory.due),
            last_review=utc(memory.last_review) if memory.last_review else None,
        )
    card, _log = scheduler.review_card(card, Rating(rating), review_datetime=now)
    return MemoryState(
        state=int(card.state),
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due,
        last_review=card.last_review,
    )


def next_due_by_rating(
    memory: MemoryState | None, now: datetime, config: SchedulerSettings | None = None
) -> dict[int, datetime]:
    """When the item would come back after each rating given now (before any fuzzing)."""
    config = config or SchedulerSettings.from_django()
    if config.enable_fuzzing:  # a preview says what the schedule is, not one random draw of it
        config = SchedulerSettings(**{**config.__dict__, "enable_fuzzing": False})
    return {rating: review(memory, rating, now, config).due for rating in RATINGS}


def replay(
    reviews: list[tuple[int, datetime]], config: SchedulerSettings | None = None
) -> MemoryState | None:
    """The memory state that a sequence of (rating, reviewed_at) reviews leads to."""
    memory = None
    for rating, reviewed_at in sorted(reviews, key=lambda pair: pair[1]):
        memory = review(memory, rating, reviewed_at, config)
    return memory


def retrievability(
    memory: MemoryState | None, now: datetime, config: SchedulerSettings | None = None
) -> float:
    """The chance of recalling the item now, from FSRS's forgetting curve.

    py-fsrs counts whole elapsed days, so a star would stay equally bright all day and then
    jump; this uses fractional days so brightness fades smoothly.
    """
    if memory is None or memory.last_review is None or not memory.stability:
        return 0.0
    # The parameters are not a setting: without a config, the defaults, with no settings read
    # (/review ranks every due item by this).
    parameters = config.parameters if config else PARAMETERS
    decay = -parameters[20]
    factor = 0.9 ** (1 / decay) - 1
    elapsed_days = max(0.0, (utc(now) - utc(memory.last_review)).total_seconds() / 86400)
    return math.pow(1 + factor * elapsed_days / memory.stability, decay)
