"""The night sky: what state each star is in, and where it sits. No database, no request: the
one rule for a star's state is `star_state`, and `counter_conditions` says the same as a query.

Every question and flashcard is a star; a lesson's items form its constellation; each subject is a
region of the sky. Positions come from hashes of public ids and the catalogue's shape, so the sky
looks the same on every visit; a new subject narrows every region and a new lesson can add a row
to its region's grid, and either moves the constellations it touches.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import cast

from django.db.models import Q

from practice import scheduling
from practice.scheduling import AGAIN, MemoryState, SchedulerSettings

WIDTH, HEIGHT = 1000, 560
MARGIN = 40
CONSTELLATION_RADIUS = 52
LABEL_HALF_WIDTH = 95  # a constellation's name is drawn centred under it


# The five words for a star's state, named the same on every page, SVG title, header, Markdown
# twin, API and progress file: its evidence (unlit, kindled, lit) and, apart from it, due and
# missed. See star_state for what each means; the words page (/sky/words) says it to learners.
class StarWord(StrEnum):
    UNLIT = "unlit"
    KINDLED = "kindled"
    LIT = "lit"
    DUE = "due"
    MISSED = "missed"


UNLIT, KINDLED, LIT, DUE, MISSED = StarWord
WORDS = tuple(StarWord)
# What each word means, for learners (the words page, /sky/words, and its Markdown twin).
MEANINGS = {
    LIT: "your answers, spread over a day or more, show you know it, not luck; it fades as "
    "forgetting gets likelier, and stays lit when it comes due, until a wrong answer or an "
    "answer you mark \u201cI guessed\u201d",
    KINDLED: "answered right, and not yet lit: it lights when a few more right answers in a "
    "row, spread over a day or more, show it was not luck; it fades as a lit star does",
    UNLIT: "not answered right yet, or not since a wrong answer or a guess",
    DUE: "time to come back to it, whatever it has earned",
    MISSED: "your last answer to it that counted was wrong (a retry after its answer was shown "
    "is practice, and does not change this); it comes back soon",
}

# How far a star's evidence has come (Memory.evidence), named by its word (as in a progress file).
NO_EVIDENCE, KINDLING, CONFIRMED = 0, 1, 2
EVIDENCE = {NO_EVIDENCE: str(UNLIT), KINDLING: str(KINDLED), CONFIRMED: str(LIT)}

# The evidence rule: a star lights when the whole history of its scheduled answers makes a blind
# guess unlikely. Each answer updates the log-odds that the learner knows the item rather than
# answers at random (Memory.evidence_score): a right answer by (1 - SLIP) / guess rate, a wrong
# one by SLIP / (1 - guess rate), a declared guess not at all. For a learner who answers at
# random these odds are a martingale, so by Ville's inequality the chance that they ever reach
# LIGHT_ODDS is at most 1 / LIGHT_ODDS (5 %), however often the item is asked. On top of that a
# star lights only on a run of right answers (no miss, no declared guess) spanning at least a day
# (CONFIRMATION_GAP): a right answer right after a miss or a guess never lights it by itself.
SLIP = 0.2  # the chance that a learner who knows the item answers it wrongly
LIGHT_ODDS = 20
LIGHT_SCORE = math.log(LIGHT_ODDS)
CONFIRMATION_GAP = timedelta(days=1)
# A sitting. Every answer's verdict shows the right one, so an answer given within this of the
# learner's last answer to the same item tests what was just on screen, not memory: it is
# practice, logged and never scheduled ("Practise again" straight after a round, a card set gone
# through twice). A /review set starts afresh after it.
SITTING = timedelta(hours=1)
# Until its star is lit, an item comes back within this, so that a learner who knows it gets the
# answers that light it within days rather than weeks (successive relearning).
UNLIT_MAX_INTERVAL = timedelta(days=3)
# A flashcard's self-rating is read as a question with this chance of a right answer by luck.
FLASHCARD_GUESS_RATE = 1 / 3

# The rule in one paragraph, for learners (the words page).
RULE = (
    "A right answer kindles a star. It lights when the whole history of your answers to it "
    "makes a lucky guess unlikely: a right answer counts for more the more choices its question "
    "has and a wrong answer counts against, so someone answering at random lights a star with "
    f"at most a {100 // LIGHT_ODDS} % chance, however often they try. It lights only on right "
    "answers that span a day (24 hours) or more, with no wrong answer or guess between them: a "
    "right answer straight after a wrong one never lights it by itself. A wrong answer leaves a "
    "star unlit, even one that was lit, until right answers kindle and light it again. An "
    "answer you mark \u201cI guessed\u201d says you do not know it yet: it counts neither for "
    "nor against those odds, but like a wrong answer it leaves the star unlit and brings the "
    "question back as soon as a miss would, without marking it missed. Practice counts neither "
    "way: the retry of a miss, asked after its answer was shown, and any answer given within "
    "an hour of seeing that item\u2019s answer (\u201cPractise again\u201d straight after a "
    "round). "
    f"Until it is lit, a star comes back within {UNLIT_MAX_INTERVAL.days} days."
)


class Outcome(StrEnum):
    RIGHT = "right"  # answered right; a flashcard rated Hard, Good or Easy
    WRONG = "wrong"  # answered wrong; a flashcard rated Again: the star is missed
    GUESSED = "guessed"  # right, but the learner said they guessed: no evidence either way


def outcome_of(rating: int, correct: bool | None) -> Outcome:
    """What a stored scheduled review says: a question's by its correctness (a right answer
    rated below Good was declared a guess), a flashcard's by its rating."""
    if correct is None:
        return Outcome.WRONG if rating == AGAIN else Outcome.RIGHT
    if not correct:
        return Outcome.WRONG
    return Outcome.RIGHT if rating >= scheduling.GOOD else Outcome.GUESSED


def guess_rate(choices: int, *, several: bool) -> float:
    """The chance of answering a question right at random: 1 in its choices, or, where every
    right choice must be picked, 1 in the non-empty sets of choices."""
    if choices < 2:
        return 0.5
    return 1 / (2**choices - 1) if several else 1 / choices


@dataclass(frozen=True)
class Evidence:
    """What an item's scheduled answers so far show (stored on its Memory)."""

    level: int = NO_EVIDENCE
    score: float = 0.0  # the log-odds of "knows it" against "answers at random"
    streak_since: datetime | None = None  # the first right answer since the last miss or guess
    lit_at: datetime | None = None  # the first time it was lit; never cleared
    missed: bool = False  # the last scheduled answer was wrong

    def after(self, outcome: Outcome, *, guess_rate: float, now: datetime) -> Evidence:
        """The evidence after one more scheduled answer (never a practice one)."""
        if outcome == Outcome.WRONG:
            score = self.score + math.log(SLIP / (1 - guess_rate))
            return Evidence(NO_EVIDENCE, score, None, self.lit_at, missed=True)
        if outcome == Outcome.GUESSED:
            return Evidence(NO_EVIDENCE, self.score, None, self.lit_at, missed=False)
        score = self.score + _right_answer_weight(guess_rate)
        since = self.streak_since or now
        lit = self.level == CONFIRMED or (score >= LIGHT_SCORE and now - since >= CONFIRMATION_GAP)
        if lit:
            return Evidence(CONFIRMED, score, since, self.lit_at or now)
        return Evidence(KINDLING, score, since, self.lit_at)


def _right_answer_weight(guess_rate: float) -> float:
    """How far one right answer moves the evidence score towards LIGHT_SCORE."""
    return math.log((1 - SLIP) / guess_rate)


def answers_to_light(evidence: Evidence, guess_rate: float) -> int | None:
    """How many more right answers in a row light a star not yet lit (None: lit), the last
    of them at least CONFIRMATION_GAP after the run's first (lights_from): enough to lift its
    score to LIGHT_SCORE, and at least two when no run has begun (the first begins one)."""
    if evidence.level == CONFIRMED:
        return None
    needed = math.ceil((LIGHT_SCORE - evidence.score) / _right_answer_weight(guess_rate))
    return max(needed, 1 if evidence.level == KINDLING else 2)


def right_answers_to_light(guess_rate: float) -> int:
    """How many right answers in a row light a new star: three for four choices."""
    return cast(int, answers_to_light(Evidence(), guess_rate))


def lights_from(evidence: Evidence) -> datetime | None:
    """The moment from which a kindled star's run of right answers spans CONFIRMATION_GAP, so
    that a right answer can light it (None: lit, or no run begun)."""
    if evidence.level != KINDLING or evidence.streak_since is None:
        return None
    return evidence.streak_since + CONFIRMATION_GAP


def due_until_lit(due: datetime, last_review: datetime | None, level: int) -> datetime:
    """When an item comes back: as the scheduler says, but within UNLIT_MAX_INTERVAL of its
    last review until its star is lit."""
    if level == CONFIRMED or last_review is None:
        return due
    return min(due, last_review + UNLIT_MAX_INTERVAL)


def flashcard_dues(
    memory: MemoryState | None, evidence: Evidence, now: datetime
) -> dict[int, datetime]:
    """When a flashcard would come back after each rating given now, as the rating would set
    it: the scheduler's due, within UNLIT_MAX_INTERVAL while the rating leaves it unlit."""
    return {
        rating: due_until_lit(
            due,
            now,
            evidence.after(
                outcome_of(rating, None), guess_rate=FLASHCARD_GUESS_RATE, now=now
            ).level,
        )
        for rating, due in scheduling.next_due_by_rating(memory, now).items()
    }


def star_change(before: int, after: int) -> str:
    """What one answer did to its star, as its verdict says it: 'lit', 'kindled', 'unlit' (a
    wrong answer or a guess put a lit or kindled star out) or ''."""
    if after == CONFIRMED and before != CONFIRMED:
        return LIT
    if after == KINDLING and before == NO_EVIDENCE:
        return KINDLED
    if after == NO_EVIDENCE and before != NO_EVIDENCE:
        return UNLIT
    return ""


def evidence_of(answers: list[tuple[Outcome, datetime]], *, guess_rate: float) -> Evidence:
    """The evidence a sequence of scheduled (outcome, moment) answers leads to: what answering
    them one by one on the site would have stored."""
    evidence = Evidence()
    for outcome, moment in sorted(answers, key=lambda answer: answer[1]):
        evidence = evidence.after(outcome, guess_rate=guess_rate, now=moment)
    return evidence


@dataclass(frozen=True)
class StarState:
    """A star's state: its evidence level (`word`: unlit, kindled or lit) and, apart from it,
    whether it has come due and whether its last scheduled answer was missed."""

    word: StarWord  # UNLIT, KINDLED or LIT
    brightness: float  # 0 to 1: how close a lit or kindled star still is to full light
    retrievability: float
    due: datetime | None  # when it comes back (None: never answered)
    is_due: bool = False
    missed: bool = False

    @property
    def words(self) -> list[str]:
        """Every state word that applies, the evidence first: ['lit', 'due']."""
        return [self.word, *([DUE] if self.is_due else []), *([MISSED] if self.missed else [])]

    def describe(self, now: datetime) -> str:
        """The state in words, with when it matters next: 'lit, next review in 4 days',
        'lit, due: came due 2 days ago', 'unlit, missed: back in 5 hours'."""
        if self.due is None:
            return f"{UNLIT}, not answered yet"
        words = ", ".join(self.words)
        if self.is_due:
            return f"{words}: came due {_relative(self.due, now)}"
        return f"{words}: next review {_relative(self.due, now)}"


def star_state(
    memory: MemoryState | None,
    now: datetime,
    config: SchedulerSettings | None = None,
    *,
    evidence: int = NO_EVIDENCE,
    missed: bool = False,
) -> StarState:
    """The state of a star, from its item's memory state, evidence level and missed mark.

    - **unlit**: no right answer since its last miss or declared guess (or none at all);
    - **kindled**: answered right, not yet lit;
    - **lit**: the whole history of its answers makes a blind guess unlikely, on a run of right
      answers spanning a day or more (`Evidence.after`);
    - a lit or kindled star's brightness follows retrievability, from full at its last review
      down to its dimmest when it comes due;
    - **due**, apart from those: its time to come back has come. A lit star that comes due stays
      lit (at its dimmest), so no count of what was earned falls because time passed;
    - **missed**, apart from those too: its last scheduled answer was wrong.

    Practice answers (given after the answer was shown) change no memory, so they never kindle,
    light or miss anything."""
    if memory is None:
        return StarState(UNLIT, 0.0, 0.0, None)
    config = config or SchedulerSettings.from_django()
    recall = scheduling.retrievability(memory, now, config)
    is_due = memory.due <= now
    if evidence == NO_EVIDENCE:
        return StarState(UNLIT, 0.0, recall, memory.due, is_due, missed)
    # Lit and kindled stars fade alike as forgetting gets likelier, dimmest when due, so a
    # kindled star long overdue is never drawn brighter than a lit one beside it.
    at_due = scheduling.retrievability(memory, memory.due, config)
    span = 1.0 - at_due
    brightness = 1.0 if span <= 0 else min(1.0, max(0.0, (recall - at_due) / span))
    word = LIT if evidence == CONFIRMED else KINDLED
    return StarState(word, brightness, recall, memory.due, is_due, missed)


def counter_conditions(now: datetime) -> dict[str, Q]:
    """The header's counts as conditions on stored memories, for the database to count over
    many: stars `lit` and `kindled`, `due`, and `ever_lit`. Each is `star_state`'s rule for its
    state, written as a query (tests/practice/test_star_counts.py holds them together)."""
    return {
        "lit": Q(evidence=CONFIRMED),
        "kindled": Q(evidence=KINDLING),
        "due": Q(due__lte=now),
        "ever_lit": Q(lit_at__isnull=False),
    }


def _relative(moment: datetime, now: datetime) -> str:
    seconds = (moment - now).total_seconds()
    future = seconds >= 0
    seconds = abs(seconds)
    hours = round(seconds / 3600)
    if seconds < 3600:
        amount = "under an hour"
    elif hours < 24:  # 23 h 40 min is "1 day", as it is a minute later
        amount = f"{hours} hour{'s' if hours != 1 else ''}"
    else:
        days = round(seconds / 86400)
        amount = f"{days} day{'s' if days != 1 else ''}"
    return f"in {amount}" if future else f"{amount} ago"


def _unit(*parts: str) -> float:
    """A stable number in [0, 1) from strings (ids), the same on every machine and visit."""
    digest = hashlib.blake2b("/".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class Region:
    x: float
    width: float


def regions(subject_slugs: list[str]) -> dict[str, Region]:
    """Each subject gets a vertical band of the sky, in the subjects' own order."""
    count = max(len(subject_slugs), 1)
    width = (WIDTH - 2 * MARGIN) / count
    return {slug: Region(MARGIN + i * width, width) for i, slug in enumerate(subject_slugs)}


def constellation_centres(
    region: Region, lesson_ids: list[str], *, named: bool = True
) -> dict[str, tuple[float, float]]:
    """Place each lesson in a free cell of its region's grid, chosen by a hash of its id. A
    named sky keeps room for every name; a sky too large for names fills its regions with an
    even grid instead."""
    if named:
        inner_x = region.x + min(LABEL_HALF_WIDTH, region.width / 2)
        inner_width = max(region.width - 2 * LABEL_HALF_WIDTH, 0)
        columns = max(1, int(inner_width // (LABEL_HALF_WIDTH * 2)) + 1)
        needed = max(len(lesson_ids) * 2, 4)
    else:
        inner_x, inner_width = region.x + 12, max(region.width - 24, 0)
        aspect = inner_width / (HEIGHT - 2 * MARGIN - 40)
        columns = max(2, round(math.sqrt(len(lesson_ids) * aspect)))
        needed = len(lesson_ids) + columns
    rows = max(2, math.ceil(needed / columns))
    top, usable_height = MARGIN + 20, HEIGHT - 2 * MARGIN - 40
    cell_w = inner_width / columns if columns > 1 else inner_width
    cell_h = usable_height / rows
    taken: set[int] = set()
    centres = {}
    for public_id in sorted(lesson_ids):
        cell = int(_unit(public_id) * columns * rows)
        while cell in taken:
            cell = (cell + 1) % (columns * rows)
        taken.add(cell)
        column, row = cell % columns, cell // columns
        jitter_x = (_unit(public_id, "x") - 0.5) * cell_w * 0.6
        jitter_y = (_unit(public_id, "y") - 0.5) * max(cell_h - 2 * CONSTELLATION_RADIUS, 0) * 0.6
        x = inner_x + (column + 0.5) * cell_w if columns > 1 else inner_x + inner_width / 2
        centres[public_id] = (
            round(x + jitter_x, 1),
            round(top + (row + 0.5) * cell_h + jitter_y, 1),
        )
    return centres


@functools.lru_cache(maxsize=8192)  # the same for every learner: worked out once per lesson
def star_offsets(
    lesson_id: str, item_keys: tuple[str, ...], radius: float = CONSTELLATION_RADIUS
) -> tuple[tuple[float, float], ...]:
    """Where a constellation's stars sit around its centre: a loose ring, turned by hashes."""
    count = max(len(item_keys), 1)
    turn = _unit(lesson_id, "turn") * 2 * math.pi
    offsets = []
    for index, key in enumerate(item_keys):
        angle = turn + 2 * math.pi * index / count + (_unit(key, "a") - 0.5) * 0.5
        distance = radius * (0.45 + 0.55 * _unit(key, "r"))
        offsets.append((round(math.cos(angle) * distance, 1), round(math.sin(angle) * distance, 1)))
    return tuple(offsets)


def background_stars(count: int = 140) -> list[tuple[float, float, float, float]]:
    """Faint decorative stars behind the constellations: (x, y, radius, opacity), fixed."""
    stars = []
    for index in range(count):
        key = f"background-{index}"
        stars.append(
            (
                round(6 + _unit(key, "x") * (WIDTH - 12), 1),
                round(6 + _unit(key, "y") * (HEIGHT - 12), 1),
                round(0.4 + _unit(key, "r") * 0.9, 2),
                round(0.15 + _unit(key, "o") * 0.35, 2),
            )
        )
    return stars


def forecast(dues: list[datetime], now: datetime, days: int = 14) -> list[tuple[datetime, int]]:
    """How many items are due on each of the next days. Day 1 is today, and it counts what is
    overdue too: those items are waiting today, and a "Today: 0" above 14 overdue would mislead."""
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    counts = [0] * days
    for due in dues:
        index = max((due - start) // timedelta(days=1), 0)
        if 0 <= index < days:
            counts[index] += 1
    return [(start + timedelta(days=i), counts[i]) for i in range(days)]


def forecast_moments(
    dues: list[datetime], now: datetime, days: int = 14
) -> tuple[int, list[datetime]]:
    """What the forecast counts, for the page's script to count again by the learner's own days
    (the forecast's days are UTC's): how many are due already, and when each of the rest falls
    due within reach of the forecast's last day in any time zone."""
    overdue = sum(due <= now for due in dues)
    return overdue, sorted(due for due in dues if now < due <= now + timedelta(days=days))
