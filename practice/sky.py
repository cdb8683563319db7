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

from django.db.models import Q

from practice import scheduling
from practice.scheduling import AGAIN, MemoryState, SchedulerSettings

WIDTH, HEIGHT = 1000, 560
MARGIN = 40
CONSTELLATION_RADIUS = 52
LABEL_HALF_WIDTH = 95  # a constellation's name is drawn centred under it


# The five states of a star, named the same on every page, SVG title, header, Markdown twin and
# export. See star_state for what each means and which wins when several apply.
class StarWord(StrEnum):
    UNLIT = "unlit"
    KINDLED = "kindled"
    LIT = "lit"
    DUE = "due"
    MISSED = "missed"


UNLIT, KINDLED, LIT, DUE, MISSED = StarWord
WORDS = tuple(StarWord)

# What the scheduled answers since an item's last miss show of the learner's memory of it
# (Memory.evidence), and the names a progress file gives them.
NO_EVIDENCE, KINDLING, CONFIRMED = 0, 1, 2
EVIDENCE = {NO_EVIDENCE: "none", KINDLING: "kindled", CONFIRMED: "lit"}
# A right answer confirms a memory when it comes at least this long after the item's review
# before it: remembered across days, not just across the minutes since the answer was shown.
CONFIRMATION_GAP = timedelta(days=1)


def recalled(rating: int, *, graded: bool) -> bool:
    """Whether a scheduled review shows the item was remembered: a flashcard the learner rated
    Hard or better, a question answered right, but not a right answer they said they guessed
    (rated Hard, see scheduling.rating_for_answer)."""
    return rating >= (scheduling.GOOD if graded else scheduling.HARD)


def evidence_after(
    evidence: int,
    lit_at: datetime | None,
    *,
    rating: int,
    graded: bool,
    previous_review: datetime | None,
    now: datetime,
) -> tuple[int, datetime | None]:
    """The evidence and first-lit moment after one scheduled review (never a practice one).

    A miss wipes the evidence; a guess keeps it as it was; remembering kindles, and remembering
    at least CONFIRMATION_GAP after the item's previous scheduled review (whatever that review
    was) confirms, which lights the star. `lit_at`, the first confirmation ever, is never
    cleared: it is what "stars ever lit" counts.
    """
    if rating == AGAIN:
        return NO_EVIDENCE, lit_at
    if not recalled(rating, graded=graded):
        return evidence, lit_at
    if evidence == CONFIRMED or (
        previous_review is not None and now - previous_review >= CONFIRMATION_GAP
    ):
        return CONFIRMED, lit_at or now
    return KINDLING, lit_at


def evidence_of(
    reviews: list[tuple[int, datetime]], *, graded: bool
) -> tuple[int, datetime | None]:
    """The evidence and first-lit moment that a sequence of scheduled (rating, reviewed_at)
    reviews leads to: what answering them one by one on the site would have stored."""
    evidence, lit_at, previous = NO_EVIDENCE, None, None
    for rating, reviewed_at in sorted(reviews, key=lambda pair: pair[1]):
        evidence, lit_at = evidence_after(
            evidence,
            lit_at,
            rating=rating,
            graded=graded,
            previous_review=previous,
            now=reviewed_at,
        )
        previous = reviewed_at
    return evidence, lit_at


@dataclass(frozen=True)
class StarState:
    word: StarWord
    brightness: float  # 0 to 1: how close a lit star still is to full light
    retrievability: float
    due: datetime | None
    missed_last: bool = False  # the last scheduled answer was wrong (said of a due star too)

    def describe(self, now: datetime) -> str:
        """The state in words, with when it matters next: '…: lit, next review in 4 days'."""
        if self.due is None:
            return f"{UNLIT}, not answered yet"
        if self.word == DUE:
            missed = ", missed last time" if self.missed_last else ""
            return f"{DUE}{missed}, came due {_relative(self.due, now)}"
        if self.word == MISSED:
            return f"{MISSED}, back {_relative(self.due, now)}"
        next_review = f"next review {_relative(self.due, now)}"
        if self.word == UNLIT:
            return f"{UNLIT}, not yet answered right from memory, {next_review}"
        return f"{self.word}, {next_review}"


def star_state(
    memory: MemoryState | None,
    last_rating: int | None,
    now: datetime,
    config: SchedulerSettings | None = None,
    *,
    evidence: int = NO_EVIDENCE,
) -> StarState:
    """The state of a star, from its item's memory, last scheduled rating and evidence.

    - **unlit**: never answered right from memory (no scheduled answer yet, or, since the last
      miss, only right answers the learner said they guessed);
    - **kindled**: answered right from memory, not yet confirmed on a later day;
    - **lit**: answered right at a review at least a day after the review before it, and not
      missed since; its brightness follows retrievability, continuously, from full at the review
      down to nothing at the moment it comes due;
    - **due**: its review time has come;
    - **missed**: the last scheduled answer was wrong; it comes back when due.

    When several apply, the first of these wins: no memory at all (unlit), due, missed, then the
    evidence (lit, kindled, else unlit). So a missed item that has come due is "due" (its title
    still says it was missed last time): the sky's due stars are exactly what /review asks and
    what the header counts as due. Practice answers (given after the answer was shown) change
    no memory, so they never kindle, light or miss anything.
    """
    if memory is None:
        return StarState(UNLIT, 0.0, 0.0, None)
    config = config or SchedulerSettings.from_django()
    recall = scheduling.retrievability(memory, now, config)
    missed = last_rating == AGAIN
    if memory.due <= now:
        return StarState(DUE, 0.0, recall, memory.due, missed_last=missed)
    if missed:
        return StarState(MISSED, 0.0, recall, memory.due, missed_last=True)
    if evidence == CONFIRMED:
        at_due = scheduling.retrievability(memory, memory.due, config)
        span = 1.0 - at_due
        brightness = 1.0 if span <= 0 else min(1.0, max(0.0, (recall - at_due) / span))
        return StarState(LIT, brightness, recall, memory.due)
    if evidence == KINDLING:
        return StarState(KINDLED, 1.0, recall, memory.due)
    return StarState(UNLIT, 0.0, recall, memory.due)


def counter_conditions(now: datetime) -> dict[str, Q]:
    """The header's counts as conditions on stored memories, for the database to count over
    many: stars kindled or lit (`learned`), `due`, and `ever_lit`. Each is `star_state`'s rule
    for its states, written as a query (tests/practice/test_sky_rules.py holds them together)."""
    return {
        "learned": Q(due__gt=now, evidence__gt=NO_EVIDENCE) & ~Q(last_rating=AGAIN),
        "due": Q(due__lte=now),
        "ever_lit": Q(lit_at__isnull=False),
    }


def _relative(moment: datetime, now: datetime) -> str:
    seconds = (moment - now).total_seconds()
    future = seconds >= 0
    seconds = abs(seconds)
    if seconds < 3600:
        amount = "under an hour"
    elif seconds < 86400:
        hours = round(seconds / 3600)
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
