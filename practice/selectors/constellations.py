"""The sky as a learner sees it: stars, constellations, the whole sky and the header's counter."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import NamedTuple, cast

from django.contrib.sessions.backends.base import SessionBase
from django.db import connection, models
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape, format_html_join
from django.utils.safestring import SafeString, mark_safe

from lessons.models import Flashcard, Lesson, Question, Subject
from lessons.selectors import Item, items_of, lesson_page
from lightmysky.lib import charts, rawrows
from lightmysky.lib.versioned import versioned_in_process
from lightmysky.sessions import SessionStore
from practice import rounds, scheduling, selectors, sky
from practice.models import (
    Learner,
    Memory,
    Review,
    Round,
    learned_now,
)
from practice.selectors import lesson_memories


# Frozen, as is Constellation: a lesson not started is one drawing shared by every learner
# (_unstarted_constellation), so a change to one learner's would show in everyone's.
@dataclass(frozen=True, slots=True)
class Star:
    kind: str
    number: int
    key: str
    label: str
    state: sky.StarState
    x: float
    y: float
    ever_lit: bool = False

    @property
    def twinkle(self) -> int:
        """One of five twinkle phases, so lit stars do not pulse in step."""
        return int(sky._unit(self.key, "twinkle") * 5)

    @property
    def opacity(self) -> str:
        """Lit stars fade with retrievability; the others are drawn by shape instead."""
        return f"{0.45 + 0.55 * self.state.brightness:.2f}" if self.state.word == sky.LIT else "1"

    @property
    def css_class(self) -> str:
        if self.state.word == sky.LIT:
            return f"star lit tw{self.twinkle}"
        return f"star {self.state.word}"

    @property
    def radius(self) -> float:
        return STAR_RADIUS[self.state.word]


# Stars differ by shape and size, not colour alone: a small dot (unlit), a small ring (missed),
# a middling star in a halo (kindled), a full star (lit) and a dashed full-size ring (due).
STAR_RADIUS = {sky.UNLIT: 2.6, sky.MISSED: 3.4, sky.KINDLED: 4.2, sky.LIT: 5.5, sky.DUE: 5.5}


class StarCounts:
    """How many stars are in each state, for anything that has `stars`."""

    stars: Sequence[Star]

    def _count(self, word: str) -> int:
        return sum(1 for star in self.stars if star.state.word == word)

    @property
    def lit(self) -> int:
        return self._count(sky.LIT)

    @property
    def kindled(self) -> int:
        return self._count(sky.KINDLED)

    @property
    def due(self) -> int:
        return self._count(sky.DUE)

    @property
    def missed(self) -> int:
        return self._count(sky.MISSED)

    @property
    def unlit(self) -> int:
        return self._count(sky.UNLIT)

    @property
    def learned(self) -> int:
        """Kindled and lit stars alike: "learned so far", as the header counts them."""
        return self.kindled + self.lit

    @property
    def ever_lit(self) -> int:
        """Stars ever lit: confirmed on a later day at least once, whatever they are now."""
        return sum(1 for star in self.stars if star.ever_lit)


@dataclass(frozen=True)
class Constellation(StarCounts):
    lesson_id: int
    public_id: str
    title: str
    url: str
    stars: tuple[Star, ...]
    x: float = 0.0
    y: float = 0.0

    @property
    def stars_svg(self) -> SafeString:
        """The stars as SVG circles, built in Python rather than with a template loop (about ten
        times faster for a large sky). Only the label is text from outside (a lesson's title),
        so only it is escaped: escaping the numbers too took half the time."""
        return mark_safe(
            "".join(
                f'<circle class="{s.css_class}" cx="{s.x}" cy="{s.y}" r="{s.radius}" '
                f'opacity="{s.opacity}" role="img"><title>{escape(s.label)}</title></circle>'
                for s in self.stars
            )
        )

    @property
    def figure_points(self) -> str:
        """The constellation's figure: its questions joined in order."""
        return " ".join(f"{s.x},{s.y}" for s in self.stars if s.kind == "question")

    @property
    def started(self) -> bool:
        """Whether the learner has answered any of its items (a star with a memory has a due)."""
        return any(star.state.due is not None for star in self.stars)

    @property
    def card_viewbox(self) -> str:
        """A window on the whole sky around this constellation alone: its phone card reuses the
        same circles, so the card costs no second layout."""
        half = sky.CONSTELLATION_RADIUS + CARD_MARGIN
        return f"{self.x - half:.1f} {self.y - half:.1f} {2 * half} {2 * half}"

    @property
    def card_origin(self) -> tuple[str, str]:
        half = sky.CONSTELLATION_RADIUS + CARD_MARGIN
        return f"{self.x - half:.1f}", f"{self.y - half:.1f}"

    @property
    def counts_in_words(self) -> str:
        """'5 of 14 learned (2 lit, 3 kindled), 3 due, 6 unlit': the states it has, in words."""
        learned = f"{self.learned} of {len(self.stars)} learned"
        if self.learned:
            learned += f" ({self.lit} lit, {self.kindled} kindled)"
        others = [
            f"{count} {word}"
            for count, word in (
                (self.due, sky.DUE),
                (self.missed, sky.MISSED),
                (self.unlit, sky.UNLIT),
            )
            if count
        ]
        return ", ".join([learned, *others])

    @property
    def name_lines(self) -> list[str]:
        """The title in lines short enough for the whole sky's label width, so that no name is
        cut off: two lines, or three for the longest titles."""
        return wrap_words(self.title, CONSTELLATION_NAME_CHARS)


# Room around a constellation's outermost stars in its phone card, in sky units.
CARD_MARGIN = 10
# About as many characters of a constellation's name as fit one line under it in the whole sky
# (sky.LABEL_HALF_WIDTH on each side, at the 12-unit font of .constellation-name).
CONSTELLATION_NAME_CHARS = 28


def wrap_words(text: str, width: int) -> list[str]:
    """Text broken between words into lines of at most `width` characters (a longer word keeps
    a line to itself)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


@dataclass
class SkyView(StarCounts):
    constellations: list[Constellation]
    regions: list[tuple[str, sky.Region]]
    links: list[tuple[float, float, float, float]]
    forecast: list[tuple[datetime, int]]
    subjects: list[SubjectInSky] = field(default_factory=list)
    region_names: list[tuple[list[str], sky.Region]] = field(default_factory=list)
    # A large catalogue's lessons not started are not drawn one by one (see NAMED_OUTLINES_UP_TO)
    summarised: bool = False

    @cached_property
    def started(self) -> list[Constellation]:
        """The lessons the learner has answered something in: the sky's counts cover these."""
        return [c for c in self.constellations if c.started]

    @cached_property
    def not_started(self) -> list[Constellation]:
        """Lessons never answered: faint outlines with their names, never counted as unlit."""
        return [c for c in self.constellations if not c.started]

    @property
    def not_started_count(self) -> int:
        return sum(subject.not_started for subject in self.subjects)

    @property
    def stars(self) -> list[Star]:  # type: ignore[override]
        """The stars of started lessons only, so a first visit is not "35 unlit" of a catalogue
        the learner has not opened."""
        return [star for c in self.started for star in c.stars]

    @property
    def forecast_bars(self) -> list[charts.Bar]:
        return charts.bars(self.forecast, left=4, step=30, width=22)


def _star(
    kind: str,
    pk: int,
    key: str,
    number: int,
    title: str,
    memories: dict,
    now,
    config,
    *,
    x: float,
    y: float,
) -> Star:
    memory, last_rating, evidence, ever_lit = memories.get(
        (kind, pk), (None, None, sky.NO_EVIDENCE, False)
    )
    state = sky.star_state(memory, last_rating, now, config, evidence=evidence)
    label = f"{kind.capitalize()} {number} of {title}: {state.describe(now)}"
    return Star(kind, number, key, label, state, x, y, ever_lit=ever_lit)


@functools.cache
def background_svg() -> str:
    """The sky's faint decorative stars as SVG, built once: the same on every page and visit."""
    return format_html_join(
        "",
        '<circle cx="{}" cy="{}" r="{}" opacity="{}"/>',
        sky.background_stars(),
    )


# A catalogue up to this many published lessons draws every lesson not started as a named
# outline that links to it; a larger one draws them as one faint path per subject, and names
# them in the table (/sky/table), one subject a page. The whole sky has room for about this many
# names, and past it their markup alone would outgrow the page's budget.
NAMED_OUTLINES_UP_TO = 40
OUTLINE_RADIUS = 6  # a lesson not started, in a summarised sky


@dataclass(frozen=True)
class SubjectPlace:
    slug: str
    name: str
    region: sky.Region
    lesson_ids: list[int]  # published, in the catalogue's order
    outlines: SafeString  # SVG path data: one small ring per lesson


class PlacedItem(NamedTuple):
    """A star where the whole sky draws it."""

    lesson_id: int
    kind: str
    pk: int
    key: str
    number: int
    x: float
    y: float


@dataclass(frozen=True)
class SkyMap:
    """Where everything sits in the sky: the same for every learner, built once per version.
    Everything is keyed by lesson, so a learner's sky reads only the lessons they started."""

    lessons: list[dict]  # pk, public_id, title, url, x, y, subject, in catalogue order
    items_by_lesson: dict[int, list[PlacedItem]]
    subjects: list[SubjectPlace]
    links: list[tuple[int, int, float, float, float, float]]  # first, later, x1, y1, x2, y2

    @cached_property
    def lesson_by_id(self) -> dict[int, dict]:
        return {entry["pk"]: entry for entry in self.lessons}

    @cached_property
    def position_of(self) -> dict[int, int]:
        """Each lesson's place in the catalogue's order."""
        return {entry["pk"]: n for n, entry in enumerate(self.lessons)}

    @property
    def named(self) -> bool:
        return len(self.lessons) <= NAMED_OUTLINES_UP_TO

    @property
    def regions(self) -> list[tuple[str, sky.Region]]:
        return [(subject.name, subject.region) for subject in self.subjects]

    @property
    def region_names(self) -> list[tuple[list[str], sky.Region]]:
        """Each region's name in lines that fit its width (9 units a character at its font)."""
        return [
            (wrap_words(subject.name, max(4, int(subject.region.width // 9))), subject.region)
            for subject in self.subjects
        ]

    @property
    def items(self) -> list[PlacedItem]:
        return [item for entry in self.lessons for item in self.items_by_lesson[entry["pk"]]]


def _outlines(centres: list[tuple[float, float]]) -> SafeString:
    """One small ring per lesson as a single path: a move and two arcs each. Numbers alone, so
    safe as they are: escaping a large catalogue's path on every request would cost more than
    the rest of the page."""
    r = OUTLINE_RADIUS
    path = "".join(
        f"M{x - r:.0f} {y:.0f}a{r} {r} 0 1 0 {2 * r} 0a{r} {r} 0 1 0 -{2 * r} 0" for x, y in centres
    )
    return mark_safe(path)


def sky_map(version: int) -> SkyMap:
    def build() -> SkyMap:
        lessons = list(
            Lesson.objects.published()
            .select_related("subject")
            .order_by("subject__position", "subject__name", "subject_id", "public_id")
        )
        items_of_lesson: dict[int, list[Item]] = {lesson.pk: [] for lesson in lessons}
        for item in items_of([lesson.pk for lesson in lessons]):
            items_of_lesson[item.lesson_id].append(item)
        items_by_lesson: dict[int, list[PlacedItem]] = {}
        subjects = {lesson.subject.slug: lesson.subject.name for lesson in lessons}
        bands = sky.regions(list(subjects))
        named = len(lessons) <= NAMED_OUTLINES_UP_TO
        placed_lessons, places, centre_of = [], [], {}
        for slug, band in bands.items():
            in_band = [lesson for lesson in lessons if lesson.subject.slug == slug]
            centres = sky.constellation_centres(
                band, [lesson.public_id for lesson in in_band], named=named
            )
            for lesson in in_band:
                x, y = centres[lesson.public_id]
                centre_of[lesson.pk] = (x, y)
                placed_lessons.append(
                    {
                        "pk": lesson.pk,
                        "public_id": lesson.public_id,
                        "title": lesson.title,
                        "url": lesson.get_absolute_url(),
                        "x": x,
                        "y": y,
                        "subject": slug,
                    }
                )
                own = items_of_lesson[lesson.pk]
                offsets = sky.star_offsets(lesson.public_id, tuple(item.key for item in own))
                items_by_lesson[lesson.pk] = [
                    PlacedItem(*item, round(x + dx, 1), round(y + dy, 1))
                    for item, (dx, dy) in zip(own, offsets, strict=True)
                ]
            places.append(
                SubjectPlace(
                    slug=slug,
                    name=subjects[slug],
                    region=band,
                    lesson_ids=[lesson.pk for lesson in in_band],
                    outlines=_outlines([centre_of[lesson.pk] for lesson in in_band]),
                )
            )
        links = [
            (first, later, *centre_of[first], *centre_of[later])
            for later, first in Lesson.needs_first.through.objects.filter(
                from_lesson__in=centre_of, to_lesson__in=centre_of
            ).values_list("from_lesson_id", "to_lesson_id")
        ]
        return SkyMap(
            lessons=placed_lessons, items_by_lesson=items_by_lesson, subjects=places, links=links
        )

    return versioned_in_process("sky-map", version, build)


@dataclass(frozen=True)
class SubjectInSky:
    """One subject of a learner's sky: how many of its lessons they started, and the path that
    draws the lessons as faint rings when the sky is summarised."""

    slug: str
    name: str
    lessons: int
    started: int
    outlines: str

    @property
    def not_started(self) -> int:
        return self.lessons - self.started


def _sky_memories(learner: Learner | None) -> tuple[dict[tuple[str, int], tuple], set[int]]:
    """The learner's memories over published lessons (as _memories_of) and the lessons they
    are in, in one query."""
    if learner is None:
        return {}, set()
    rows = Memory.objects.filter(
        learner_id=learner.pk, lesson__status=Lesson.Status.PUBLISHED
    ).values_list(
        "lesson_id",
        "question_id",
        "flashcard_id",
        *Memory.STATE_FIELDS,
        "last_rating",
        "evidence",
        "lit_at",
    )
    memories, lessons = {}, set()
    for lesson_id, question_id, flashcard_id, *state, last_rating, evidence, lit_at in rows:
        key = ("question", question_id) if question_id else ("flashcard", flashcard_id)
        memories[key] = (scheduling.MemoryState(*state), last_rating, evidence, lit_at is not None)
        lessons.add(lesson_id)
    return memories, lessons


def sky_for(*, learner: Learner | None, now: datetime, version: int) -> SkyView:
    """The whole sky of a learner: one query for their memories once the map is cached. Its
    cost grows with the lessons the learner started, not with the catalogue: a lesson not
    started is drawn from the map as it is (or, in a small catalogue, from its few stars)."""
    layout = sky_map(version)
    memories, started_ids = _sky_memories(learner)
    started_ids &= layout.lesson_by_id.keys()
    config = scheduling.SchedulerSettings.from_django()
    drawn = (
        [entry["pk"] for entry in layout.lessons]
        if layout.named
        else sorted(started_ids, key=layout.position_of.__getitem__)
    )
    constellations = []
    for pk in drawn:
        entry = layout.lesson_by_id[pk]
        stars = tuple(
            _star(kind, item_pk, key, number, entry["title"], memories, now, config, x=x, y=y)
            for _, kind, item_pk, key, number, x, y in layout.items_by_lesson[pk]
        )
        constellations.append(
            Constellation(
                pk,
                entry["public_id"],
                entry["title"],
                entry["url"],
                stars,
                x=entry["x"],
                y=entry["y"],
            )
        )
    started_in: dict[str, int] = {}
    for pk in started_ids:
        slug = layout.lesson_by_id[pk]["subject"]
        started_in[slug] = started_in.get(slug, 0) + 1
    links = [
        (x1, y1, x2, y2)
        for first, later, x1, y1, x2, y2 in layout.links
        if layout.named or first in started_ids or later in started_ids
    ]
    dues = [memory.due for memory, *_ in memories.values()]
    return SkyView(
        constellations=constellations,
        regions=layout.regions,
        region_names=layout.region_names,
        links=links,
        forecast=sky.forecast(dues, now),
        subjects=[
            SubjectInSky(
                slug=place.slug,
                name=place.name,
                lessons=len(place.lesson_ids),
                started=started_in.get(place.slug, 0),
                outlines=place.outlines,
            )
            for place in layout.subjects
        ],
        summarised=not layout.named,
    )


@dataclass(frozen=True)
class SkyTable:
    """One subject of the sky as a table: every star of the lessons the learner started there,
    and the names of the others."""

    subjects: list[SubjectInSky]
    subject: SubjectInSky | None  # None: nothing is published
    started: list[Constellation]
    not_started: list[dict]  # title, url


def sky_table_for(*, sky_view: SkyView, subject_slug: str | None, version: int) -> SkyTable | None:
    """The table page of one subject (the first when none is named); None for no such subject."""
    layout = sky_map(version)
    subject = next(
        (s for s in sky_view.subjects if subject_slug in (None, s.slug)),
        None,
    )
    if subject is None:
        return None
    place = next(p for p in layout.subjects if p.slug == subject.slug)
    in_subject = set(place.lesson_ids)
    started = [c for c in sky_view.started if c.lesson_id in in_subject]
    started_ids = {c.lesson_id for c in started}
    not_started = [layout.lesson_by_id[pk] for pk in place.lesson_ids if pk not in started_ids]
    return SkyTable(
        subjects=sky_view.subjects, subject=subject, started=started, not_started=not_started
    )


def constellation_for(
    *,
    learner: Learner | None,
    lesson: Lesson,
    items: Sequence[Item],
    now: datetime,
    memories: dict[tuple[str, int], tuple] | None = None,
) -> Constellation:
    """One lesson's stars for this learner, laid out on their own, in one query (none when
    the lesson's memories are given). Never change it: a lesson not started is the same for
    every learner at every moment, and is drawn once (`_unstarted_constellation`); it and its
    stars are frozen."""
    if memories is None:
        memories = lesson_memories(learner=learner, lesson=lesson)
    lesson_shown = (
        lesson.pk,
        lesson.public_id,
        lesson.title,
        lesson.get_absolute_url(),
        tuple(items),
    )
    if not memories:
        return _unstarted_constellation(*lesson_shown)
    return _constellation(*lesson_shown, memories=memories, now=now)


# Keyed by all it shows of the lesson, so an edited lesson is drawn anew. About 15 KB each:
# 8 MB a process at most; a lesson past the 512 most recently shown is drawn again.
@functools.lru_cache(maxsize=512)
def _unstarted_constellation(
    lesson_id: int, public_id: str, title: str, url: str, items: tuple[Item, ...]
) -> Constellation:
    return _constellation(lesson_id, public_id, title, url, items, memories={}, now=None)


def _constellation(
    lesson_id: int,
    public_id: str,
    title: str,
    url: str,
    items: tuple[Item, ...],
    *,
    memories: dict[tuple[str, int], tuple],
    now: datetime | None,  # None only without memories: a star with none shows no time
) -> Constellation:
    config = scheduling.SchedulerSettings.from_django()
    offsets = sky.star_offsets(public_id, tuple(item.key for item in items), radius=60)
    stars = tuple(
        _star(
            kind,
            pk,
            key,
            number,
            title,
            memories,
            now,
            config,
            x=round(80 + dx, 1),
            y=round(70 + dy, 1),
        )
        for (_, kind, pk, key, number), (dx, dy) in zip(items, offsets, strict=True)
    )
    return Constellation(lesson_id, public_id, title, url, stars, x=80, y=70)


@dataclass(frozen=True)
class SkyCounter:
    learned: int  # kindled and lit stars
    due: int
    ever_lit: int


def sky_counter(*, learner: Learner, now: datetime) -> SkyCounter:
    """The header's '12 learned so far · 3 due' and the stars ever lit, in one query: the same
    counts as the sky's (sky.star_state), over the same published lessons."""
    counts = Memory.objects.filter(
        learner=learner, lesson__status=Lesson.Status.PUBLISHED
    ).aggregate(
        learned=models.Count("pk", filter=learned_now(now)),
        due=models.Count("pk", filter=Q(due__lte=now)),
        ever_lit=models.Count("pk", filter=Q(lit_at__isnull=False)),
    )
    return SkyCounter(**counts)


@dataclass(frozen=True)
class MemoryRow:
    pk: int
    question_id: int | None
    flashcard_id: int | None
    state: scheduling.MemoryState
    last_rating: int
    evidence: int
    ever_lit: bool


def _in_published_lesson(alias: str = "m") -> str:
    """The SQL condition that a memory (`m`, or another alias) is of a published lesson.
    Written as "not in a draft" with the status as a literal: the drafts are few and their
    partial index (lesson_unpublished) finds them at once, where joining every memory to its
    lesson probed the lesson table once a memory. The same text as the index's condition, so
    that a prepared plan on PostgreSQL uses it; SQLite uses it because it holds the status too."""
    published = Lesson.Status.PUBLISHED.value
    assert published.isalpha()  # a literal in SQL: our own constant, never input
    return (
        f"{alias}.lesson_id NOT IN (SELECT id FROM {Lesson._meta.db_table}"
        f" WHERE NOT (status = '{published}'))"
    )


# The memory columns `_memories_and_counter_sql` reads, after the row's kind (0 for a memory,
# 1 for the counter).
_MEMORY_COLUMNS = (
    "id",
    "question_id",
    "flashcard_id",
    *Memory.STATE_FIELDS,
    "last_rating",
    "evidence",
    "lit_at",
)


@functools.cache
def _memories_and_counter_sql(rows_where: str, learner: str = "%s") -> str:
    """Memory rows and, after them, one row of the header counter's figures, in one query.
    Written out rather than built by the ORM on every request: building such a union cost more
    than running it (2 ms a page). `learner` names the learner in the counter's condition."""
    memory = Memory._meta.db_table
    columns = ", ".join(f"m.{name}" for name in _MEMORY_COLUMNS)
    return (
        f"SELECT 0, {columns} FROM {memory} m WHERE {rows_where} "
        "UNION ALL "
        # The counts (as `sky_counter` counts them, `learned_now` for the first) stand in the
        # first three columns, all integers.
        "SELECT 1, "
        "SUM(CASE WHEN m.due > %s AND m.evidence > %s AND m.last_rating <> %s THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN m.due <= %s THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN m.lit_at IS NOT NULL THEN 1 ELSE 0 END), "
        + ", ".join(["NULL"] * (len(_MEMORY_COLUMNS) - 3))
        + f" FROM {memory} m WHERE m.learner_id = {learner} AND {_in_published_lesson()}"
    )


def _aware(value: datetime | str | None) -> datetime | None:
    """A datetime column as the ORM would give it (SQLite may hand back its text)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def _counter_params(now: datetime) -> list:
    """The counter's parameters in `_memories_and_counter_sql`, but the learner's."""
    moment = connection.ops.adapt_datetimefield_value(now)
    return [moment, sky.NO_EVIDENCE, scheduling.AGAIN, moment]


def _memory_rows_and_counter(rows) -> tuple[list[MemoryRow], SkyCounter]:
    """The rows of `_memories_and_counter_sql`, read."""
    memories, counter = [], SkyCounter(learned=0, due=0, ever_lit=0)
    for is_counter, pk, question_id, flashcard_id, *rest in rows:
        if is_counter:
            counter = SkyCounter(learned=pk or 0, due=question_id or 0, ever_lit=flashcard_id or 0)
            continue
        state, step, stability, difficulty, due, last_review, last_rating, evidence, lit_at = rest
        memory = scheduling.MemoryState(
            state, step, stability, difficulty, cast(datetime, _aware(due)), _aware(last_review)
        )
        memories.append(
            MemoryRow(
                pk, question_id, flashcard_id, memory, last_rating, evidence, lit_at is not None
            )
        )
    return memories, counter


def _of_lesson(learner: str = "%s", lesson: str = "%s") -> str:
    return f"m.learner_id = {learner} AND m.lesson_id = {lesson}"


def lesson_memories_and_counter(
    *, learner: Learner | None, lesson: Lesson, now: datetime, read: ReadWithSession | None = None
) -> tuple[dict[tuple[str, int], tuple], SkyCounter | None]:
    """The learner's memories of a lesson's items (as `lesson_memories`) and the header's
    counter (as `sky_counter`), in one query, or none when they were `read` with the
    session."""
    if learner is None:
        return {}, None
    if read is not None and read.serves(learner, "lesson", lesson, now):
        rows = read.rows
    else:
        params = [learner.pk, lesson.pk, *_counter_params(now), learner.pk]
        rows = rawrows.fetch(_memories_and_counter_sql(_of_lesson()), params)
    memories, counter = _memory_rows_and_counter(rows)
    return _by_item(memories), counter


_ROUND = 2  # the kind of a row of the round (memories are 0, the counter 1)


@dataclass(frozen=True)
class ReadWithSession:
    """A learner's page's reads (`read_with_session`), made in the round trip that read the
    session: for the learner the session's row names, and for what was `asked` (the page, the
    lesson's public id or None, the moment)."""

    rows: list[tuple]
    learner_id: int | None
    asked: tuple[str, str | None, datetime]

    def serves(self, learner: Learner, page: str, lesson: Lesson | None, now: datetime) -> bool:
        asked = (page, lesson.public_id if lesson else None, now)
        return self.learner_id == learner.pk and self.asked == asked


def read_with_session(
    session: SessionBase, *, page: str, now: datetime, lesson_public_id: str | None = None
) -> ReadWithSession | None:
    """On PostgreSQL, a learner's page's reads made as the browser's session is read: one round
    trip instead of two. The `page` is "lesson" (`lesson_memories_and_counter`), "practice"
    (`lesson_stars_and_round`) or "review" (`next_due_and_counter`). None when the session
    cannot be read so (SessionStore's `load_with_learners_rows`)."""
    if not isinstance(session, SessionStore):
        return None
    learner = SessionStore.LEARNER_ID
    lesson = f"(SELECT id FROM {Lesson._meta.db_table} WHERE public_id = %s)"
    if page == "practice":
        sql = _stars_and_round_sql(learner, lesson)
        params = [lesson_public_id, lesson_public_id, *_counter_params(now)]
    elif page == "lesson":
        sql = _memories_and_counter_sql(_of_lesson(learner, lesson), learner)
        params = [lesson_public_id, *_counter_params(now)]
    elif page == "review":
        sql = _counter_and_first_due_sql(connection.vendor, learner)
        moment = connection.ops.adapt_datetimefield_value(now)
        params = [*_counter_params(now), moment, moment]
    else:
        raise ValueError(f"No reads with the session for a {page!r} page.")
    read = session.load_with_learners_rows(sql, params, using=connection.alias)
    if read is None:
        return None
    rows, learner_id = read
    return ReadWithSession(rows, learner_id, (page, lesson_public_id, now))


def lesson_stars_and_round(
    *,
    learner: Learner | None,
    lesson: Lesson,
    questions: list[Question],
    now: datetime,
    read: ReadWithSession | None = None,
) -> tuple[dict[tuple[str, int], tuple], SkyCounter | None, rounds.RoundProgress]:
    """`lesson_memories_and_counter` and the learner's latest round of the lesson
    (`selectors.round_progress`): a whole practice page's reads, in one query, or none when
    they were `read` with the session."""
    if learner is None:
        return {}, None, rounds.RoundProgress(questions=questions)
    if read is not None and read.serves(learner, "practice", lesson, now):
        rows = read.rows
    else:
        params = [learner.pk, lesson.pk, learner.pk, lesson.pk, *_counter_params(now), learner.pk]
        rows = rawrows.fetch(_stars_and_round_sql(), params)
    kind_at = _round_and_answer_width()
    memories, counter = _memory_rows_and_counter(
        row[kind_at:] for row in rows if row[kind_at] != _ROUND
    )
    progress = selectors.with_round(
        rounds.RoundProgress(questions=questions), [row for row in rows if row[kind_at] == _ROUND]
    )
    return _by_item(memories), counter, progress


@functools.cache
def _round_and_answer_width() -> int:
    return len(Round._meta.concrete_fields) + len(Review._meta.concrete_fields)


@functools.cache
def _stars_and_round_sql(learner: str = "%s", lesson: str = "%s") -> str:
    """The round's rows (`selectors.round_with_answers_sql`), then the memories' and the
    counter's (`_memories_and_counter_sql`), each kind's columns null in the others' rows."""
    round_columns = _round_and_answer_width()
    round_rows = selectors.round_with_answers_sql(
        by_key=False,
        more_columns=f", {_ROUND}" + ", NULL" * len(_MEMORY_COLUMNS),
        learner=learner,
        lesson=lesson,
    )
    return (
        f"{round_rows} UNION ALL SELECT {', '.join(['NULL'] * round_columns)}, stars.*"
        f" FROM ({_memories_and_counter_sql(_of_lesson(learner, lesson), learner)}) AS stars"
    )


def _by_item(rows: list[MemoryRow]) -> dict[tuple[str, int], tuple]:
    """Memories by (kind, item id), as `lesson_memories` gives them."""
    memories: dict[tuple[str, int], tuple] = {}
    for row in rows:
        key = ("question", row.question_id) if row.question_id else ("flashcard", row.flashcard_id)
        memories[cast(tuple[str, int], key)] = (
            row.state,
            row.last_rating,
            row.evidence,
            row.ever_lit,
        )
    return memories


def next_due_and_counter(
    *, learner: Learner, now: datetime, version: int, read: ReadWithSession | None = None
) -> tuple[Memory | None, int, SkyCounter]:
    """The item to review first (the least likely to be remembered), how many are due, and the
    header's counter, whose due items are those /review asks: in one query (or none, when they
    were `read` with the session), which reads no due item but the first, however many are
    due. The item's lesson and question come from the page data of content `version`
    (`_with_lesson_and_item`)."""
    if read is not None and read.serves(learner, "review", None, now):
        rows = rawrows.from_rows(read.rows, (Memory, Flashcard))
    else:
        moment = connection.ops.adapt_datetimefield_value(now)
        params = [*_counter_params(now), learner.pk, learner.pk, moment, moment]
        rows = rawrows.instances(
            _counter_and_first_due_sql(connection.vendor), params, (Memory, Flashcard)
        )
    [(memory, flashcard, public_id, *counts)] = rows
    learned, due, ever_lit = (cast(int | None, count) or 0 for count in counts)
    counter = SkyCounter(learned=learned, due=due, ever_lit=ever_lit)
    if memory is None:
        return None, 0, counter
    memory = _with_lesson_and_item(
        cast(Memory, memory), cast(Flashcard | None, flashcard), cast(str, public_id), version
    )
    return memory, counter.due, counter


@functools.cache
def _counter_and_first_due_sql(vendor: str, learner: str = "%s") -> str:
    """The header counter's figures (as `_memories_and_counter_sql` counts them), with the due
    item least likely to be remembered (`scheduling.retrievability`), its flashcard if it is
    one and its lesson's public id: an item with no review or no stability first, then the
    most days since its last review for its stability (a day before "now" counted as none),
    then the earliest due, the oldest memory. No item due: its columns are null."""
    if vendor == "postgresql":
        days = "GREATEST(0, EXTRACT(EPOCH FROM (%s - d.last_review)) / 86400)"
    else:
        days = "MAX(0, julianday(%s) - julianday(d.last_review))"
    memory = Memory._meta.db_table
    return (
        f"SELECT {rawrows.columns(Memory, 'm')}, {rawrows.columns(Flashcard, 'f')},"
        " l.public_id, c.learned, c.due, c.ever_lit FROM ("
        "SELECT "
        "SUM(CASE WHEN m.due > %s AND m.evidence > %s AND m.last_rating <> %s THEN 1 ELSE 0 END)"
        " AS learned, "
        "SUM(CASE WHEN m.due <= %s THEN 1 ELSE 0 END) AS due, "
        "SUM(CASE WHEN m.lit_at IS NOT NULL THEN 1 ELSE 0 END) AS ever_lit"
        f" FROM {memory} m WHERE m.learner_id = {learner} AND {_in_published_lesson()}) c"
        f" LEFT OUTER JOIN {memory} m ON m.id = (SELECT d.id FROM {memory} d"
        f" WHERE d.learner_id = {learner} AND d.due <= %s AND {_in_published_lesson('d')}"
        " ORDER BY CASE WHEN d.last_review IS NULL OR d.stability IS NULL OR d.stability = 0"
        f" THEN 0 ELSE 1 END, {days} / NULLIF(d.stability, 0) DESC, d.due, d.id LIMIT 1)"
        f" LEFT OUTER JOIN {Lesson._meta.db_table} l ON l.id = m.lesson_id"
        f" LEFT OUTER JOIN {Flashcard._meta.db_table} f ON f.id = m.flashcard_id"
    )


@functools.cache
def _memory_whole_sql() -> str:
    return (
        f"SELECT {rawrows.columns(Memory, 'm')}, {rawrows.columns(Lesson, 'l')},"
        f" {rawrows.columns(Subject, 's')}, {rawrows.columns(Question, 'q')},"
        f" {rawrows.columns(Flashcard, 'f')}"
        f" FROM {Memory._meta.db_table} m"
        f" INNER JOIN {Lesson._meta.db_table} l ON l.id = m.lesson_id"
        f" INNER JOIN {Subject._meta.db_table} s ON s.id = l.subject_id"
        f" LEFT OUTER JOIN {Question._meta.db_table} q ON q.id = m.question_id"
        f" LEFT OUTER JOIN {Flashcard._meta.db_table} f ON f.id = m.flashcard_id"
        " WHERE m.id = %s"
    )


def _with_lesson_and_item(
    memory: Memory, flashcard: Flashcard | None, public_id: str, version: int
) -> Memory:
    """The memory with its lesson and item. The lesson and its questions are taken from the
    page data this process keeps for the lesson's pages (`lesson_page`, of content `version`),
    which its lesson and practice pages build too: reading the lesson's 26 columns and making
    instances of them cost more than the rest of the query. A question the page data lacks
    (an edit since) is read again with the memory instead."""
    page = lesson_page(public_id, version)
    questions = {question.pk: question for question in page.questions} if page else {}
    if page is None or (memory.question_id and memory.question_id not in questions):
        return _memory_whole(memory.pk)
    memory.lesson = page.lesson
    memory.question = questions[memory.question_id] if memory.question_id else None
    memory.flashcard = flashcard
    return memory


def _memory_whole(pk: int) -> Memory:
    """A memory with its lesson, subject and item, as `select_related` would read it."""
    [(memory, lesson, subject, question, flashcard)] = rawrows.instances(
        _memory_whole_sql(), [pk], (Memory, Lesson, Subject, Question, Flashcard)
    )
    memory, lesson = cast(Memory, memory), cast(Lesson, lesson)
    lesson.subject = cast(Subject, subject)
    memory.lesson = lesson
    memory.question = cast(Question | None, question)
    memory.flashcard = cast(Flashcard | None, flashcard)
    return memory


# A round's answers and end, in the stars ------------------------------------------------------


def answer_reward(review: Review, question: Question, constellation: Constellation) -> str | None:
    """'kindled' or 'lit' when this answer left its star so: the star shown beside the verdict.
    A practice answer or a right guess is no evidence of memory, so it shows none."""
    if not review.correct or review.practice or review.rating == scheduling.HARD:
        return None
    star = next(
        (s for s in constellation.stars if s.kind == "question" and s.key == question.key), None
    )
    word = star.state.word if star else None
    return word if word in (sky.KINDLED, sky.LIT) else None


def round_outcome(
    progress: rounds.RoundProgress, constellation: Constellation, now: datetime
) -> dict:
    """What the round did to the lesson's stars, and when its questions come back."""
    stars = {s.key: s for s in constellation.stars if s.kind == "question"}
    first_right = [row["question"] for row in progress.results() if row["first_right"]]
    words = [stars[q.key].state.word for q in first_right if q.key in stars]
    comes_back: dict[str, int] = {}
    dues = sorted(
        star.state.due
        for question in progress.questions
        if (star := stars.get(question.key)) and star.state.due and star.state.due > now
    )
    for due in dues:
        day = day_words(due, now)
        comes_back[day] = comes_back.get(day, 0) + 1
    return {
        "kindled": words.count(sky.KINDLED),
        "lit": words.count(sky.LIT),
        "comes_back": list(comes_back.items()),
    }


def day_words(moment: datetime, now: datetime) -> str:
    days = (moment.date() - now.date()).days
    if days <= 0:
        return "later today"
    if days == 1:
        return "tomorrow"
    if days < 14:
        return f"in {days} days"
    return f"on {moment:%a} {moment.day} {moment:%b}"
