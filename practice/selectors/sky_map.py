"""The whole sky: where every lesson and item sits (the sky map, the same for every learner and
built once per content version), and a learner's sky drawn on it, as a picture and as a table."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import NamedTuple

from django.utils.safestring import SafeString

from lessons.models import Lesson
from lessons.selectors import Item, items_of
from lightmysky.lib import charts
from lightmysky.lib.versioned import versioned
from practice import scheduling, sky
from practice.drawing import Constellation, Star, StarCounts, outlines, wrap_words
from practice.models import Learner, Memory
from practice.selectors import MEMORY_COLUMNS, Memories, memories_from
from practice.selectors.stars import star


@dataclass
class SkyView(StarCounts):
    constellations: list[Constellation]
    regions: list[tuple[str, sky.Region]]
    links: list[tuple[float, float, float, float]]
    forecast: list[tuple[datetime, int]]
    # The same dues for the page's script, which counts them by the learner's own days
    overdue: int = 0
    coming_due: list[datetime] = field(default_factory=list)
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


# A catalogue up to this many published lessons draws every lesson not started as a named
# outline that links to it; a larger one draws them as one faint path per subject, and names
# them in the table (/sky/table), one subject a page. The whole sky has room for about this many
# names, and past it their markup alone would outgrow the page's budget.
NAMED_OUTLINES_UP_TO = 40


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
                    outlines=outlines([centre_of[lesson.pk] for lesson in in_band]),
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

    return versioned("sky-map", version, build)


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


def _sky_memories(learner: Learner | None) -> tuple[Memories, set[int]]:
    """The learner's memories over published lessons (as `selectors.memories_of` reads them)
    and the lessons they are in, in one query."""
    if learner is None:
        return {}, set()
    rows = list(
        Memory.objects.filter(learner_id=learner.pk)
        .in_published_lessons()
        .values_list("lesson_id", *MEMORY_COLUMNS)
    )
    return memories_from(row[1:] for row in rows), {row[0] for row in rows}


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
            star(kind, item_pk, key, number, entry["title"], memories, now, config, x=x, y=y)
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
    overdue, coming_due = sky.forecast_moments(dues, now)
    return SkyView(
        constellations=constellations,
        regions=layout.regions,
        region_names=layout.region_names,
        links=links,
        forecast=sky.forecast(dues, now),
        overdue=overdue,
        coming_due=coming_due,
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
