"""Reads for the practice pages, each in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import cast

from django.contrib.sessions.backends.base import SessionBase
from django.db import models
from django.db.models import Avg, Case, Count, FloatField, OuterRef, Q, Subquery, When
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.utils.html import format_html_join

from lessons.models import Area, Flashcard, Lesson, Question, Subject
from lessons.selectors import items_of
from lightmysky.lib.http import SiteRequest
from lightmysky.lib.versioned import versioned
from practice import rounds, scheduling, sky
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    Memory,
    Review,
    Round,
)

REVIEW_BATCH_SIZE = 8


class LearnerRequest(SiteRequest):
    """A request to a practice page, for the type checker."""

    learner: Learner | None  # read once per request by learner_for_request


def learner_for_session(session: SessionBase) -> Learner | None:
    """The browser's learner, if it has answered anything; never creates one."""
    public_id = session.get(LEARNER_SESSION_KEY)
    return Learner.objects.filter(public_id=public_id).first() if public_id else None


def learner_for_request(request: HttpRequest) -> Learner | None:
    """The browser's learner for reading pages, without a query when the session names it.

    Writes verify the learner (services.learner_get_or_create); reads trust the session, which
    the server alone writes and which forget flushes. A session can outlive its learner, when
    prune_learners removes an idle one (LEARNER_IDLE_DAYS and SESSION_COOKIE_AGE are set
    separately): reads then find no memories, and the next write starts a new learner.
    """
    learner_request = cast(LearnerRequest, request)
    if not hasattr(learner_request, "learner"):
        pk = request.session.get(LEARNER_PK_SESSION_KEY)
        public_id = request.session.get(LEARNER_SESSION_KEY)
        if pk and public_id:
            learner_request.learner = Learner(pk=pk, public_id=public_id)
        else:
            learner_request.learner = learner_for_session(request.session)
    return learner_request.learner


def round_progress(
    *, learner: Learner | None, lesson: Lesson, questions: list[Question], key: str | None = None
) -> rounds.RoundProgress:
    """The learner's round of this lesson with this key, or else their latest one."""
    progress = rounds.RoundProgress(questions=questions)
    if learner is None:
        return progress
    candidates = Round.objects.filter(learner_id=learner.pk, lesson=lesson)
    candidates = candidates.filter(key=key) if key else candidates.order_by("-started_at", "-pk")
    # One query for the round's answers with the round itself; a round with no answer yet
    # (rare: only if its first write failed) costs a second one.
    progress.reviews = list(
        Review.objects.filter(round=models.Subquery(candidates.values("pk")[:1]))
        .select_related("round")
        .order_by("round_step", "pk")
    )
    progress.round = progress.reviews[0].round if progress.reviews else candidates.first()
    if progress.round is not None:
        progress.questions = rounds.in_stored_order(questions, progress.round.question_order)
    return progress


def lesson_memories(*, learner: Learner | None, lesson: Lesson) -> dict[tuple[str, int], tuple]:
    """The learner's memory of each item of a lesson, in one query (none for a visitor)."""
    return _memories_of(learner, lesson_id=lesson.pk)


def new_round_questions(
    *, questions: list[Question], memories: dict[tuple[str, int], tuple], now: datetime
) -> list[Question]:
    by_question = {
        pk: (state, last_rating)
        for (kind, pk), (state, last_rating, *_) in memories.items()
        if kind == "question"
    }
    return rounds.question_order(questions, by_question, now)


@dataclass
class DueItem:
    memory: Memory
    retrievability: float


def due_items(*, learner: Learner, now: datetime) -> list[DueItem]:
    """Everything due for the learner, least likely to be remembered first."""
    memories = (
        Memory.objects.due(now)
        .filter(learner=learner)
        .filter(Q(lesson__status=Lesson.Status.PUBLISHED))
        .select_related("lesson__subject", "question", "flashcard")
    )
    items = [
        DueItem(memory, scheduling.retrievability(memory.memory_state, now)) for memory in memories
    ]
    items.sort(key=lambda item: (item.retrievability, item.memory.due, item.memory.pk))
    return items


def memory_of_item(*, learner: Learner, kind: str, item_id: int) -> Memory | None:
    """The learner's memory of one published question or flashcard, with what its page shows."""
    field = "question_id" if kind == "question" else "flashcard_id"
    return (
        Memory.objects.filter(
            learner=learner, lesson__status=Lesson.Status.PUBLISHED, **{field: item_id}
        )
        .select_related("lesson__subject", "question", "flashcard")
        .first()
    )


def last_attempt_key(item: Memory | Review, *, before: Review | None = None) -> str | None:
    """The attempt of the learner's latest answer to this question (before `before`)."""
    if item.question_id is None:
        return None
    reviews = Review.objects.filter(learner_id=item.learner_id, question_id=item.question_id)
    if before is not None:
        reviews = reviews.filter(
            Q(reviewed_at__lt=before.reviewed_at)
            | Q(reviewed_at=before.reviewed_at, pk__lt=before.pk)
        )
    return reviews.order_by("-reviewed_at", "-pk").values_list("attempt", flat=True).first()


def flashcard_memory(*, learner: Learner | None, flashcard: Flashcard):
    """The learner's memory state of one flashcard (None: never rated), in one query."""
    if learner is None:
        return None
    row = (
        Memory.objects.filter(learner_id=learner.pk, flashcard=flashcard)
        .values_list(*Memory.STATE_FIELDS)
        .first()
    )
    return scheduling.MemoryState(*row) if row else None


def next_lesson_to_learn(*, learner: Learner | None) -> Lesson | None:
    """A published lesson the learner has not started whose "learn first" lessons they have
    all started, in the catalogue's order; in one query."""
    memories = Memory.objects.filter(learner_id=learner.pk) if learner else Memory.objects.none()
    started = memories.values("lesson_id")
    not_started = Lesson.objects.exclude(pk__in=started)
    return (
        Lesson.objects.published()
        .exclude(pk__in=started)
        .exclude(needs_first__in=not_started)
        .select_related("subject")
        .first()
    )


def next_due_at(*, learner: Learner, now: datetime) -> datetime | None:
    memory = (
        Memory.objects.filter(learner=learner, due__gt=now, lesson__status=Lesson.Status.PUBLISHED)
        .order_by("due")
        .only("due")
        .first()
    )
    return memory.due if memory else None


# The sky --------------------------------------------------------------------------------------


@dataclass
class Star:
    kind: str
    number: int
    key: str
    label: str
    state: sky.StarState
    x: float = 0.0
    y: float = 0.0
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

    stars: list[Star]

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


@dataclass
class Constellation(StarCounts):
    lesson_id: int
    public_id: str
    title: str
    url: str
    stars: list[Star]
    x: float = 0.0
    y: float = 0.0

    @property
    def stars_svg(self) -> str:
        """The stars as SVG circles. Built with format_html_join rather than a template loop:
        a sky of 10,000 stars renders about ten times faster this way."""
        return format_html_join(
            "",
            '<circle class="{}" cx="{}" cy="{}" r="{}" opacity="{}" role="img"><title>{}</title>'
            "</circle>",
            ((s.css_class, s.x, s.y, s.radius, s.opacity, s.label) for s in self.stars),
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

    @cached_property
    def started(self) -> list[Constellation]:
        """The lessons the learner has answered something in: the sky's counts cover these."""
        return [c for c in self.constellations if c.started]

    @cached_property
    def not_started(self) -> list[Constellation]:
        """Lessons never answered: faint outlines with their names, never counted as unlit."""
        return [c for c in self.constellations if not c.started]

    @property
    def stars(self) -> list[Star]:  # type: ignore[override]
        """The stars of started lessons only, so a first visit is not "35 unlit" of a catalogue
        the learner has not opened."""
        return [star for c in self.started for star in c.stars]

    @property
    def forecast_bars(self) -> list[dict]:
        """The forecast as bars of a 420 x 160 chart, labelled with weekday, day and month below:
        96 units for the busiest day."""
        busiest = max([count for _, count in self.forecast] + [1])
        bars = []
        for index, (day, count) in enumerate(self.forecast):
            height = round(96 * count / busiest) if count else 0
            bars.append(
                {
                    "day": day,
                    "count": count,
                    "x": 4 + 30 * index,
                    "middle": 15 + 30 * index,
                    "y": 112 - height,
                    "height": height,
                }
            )
        return bars


def _memories_of(learner: Learner | None, **filters) -> dict[tuple[str, int], tuple]:
    """(memory state, last rating, evidence, ever lit) by (kind, item id)."""
    if learner is None:
        return {}
    rows = Memory.objects.filter(learner_id=learner.pk, **filters).values_list(
        "question_id", "flashcard_id", *Memory.STATE_FIELDS, "last_rating", "evidence", "lit_at"
    )
    memories = {}
    for question_id, flashcard_id, *state, last_rating, evidence, lit_at in rows:
        key = ("question", question_id) if question_id else ("flashcard", flashcard_id)
        memories[key] = (scheduling.MemoryState(*state), last_rating, evidence, lit_at is not None)
    return memories


def _star(kind: str, pk: int, key: str, number: int, title: str, memories: dict, now, config):
    memory, last_rating, evidence, ever_lit = memories.get(
        (kind, pk), (None, None, sky.NO_EVIDENCE, False)
    )
    state = sky.star_state(memory, last_rating, now, config, evidence=evidence)
    label = f"{kind.capitalize()} {number} of {title}: {state.describe(now)}"
    return Star(kind, number, key, label, state, ever_lit=ever_lit)


@dataclass(frozen=True)
class SkyMap:
    """Where everything sits in the sky: the same for every learner, built once per version."""

    lessons: list[dict]  # pk, public_id, title, url, x, y
    items: list[tuple]  # (lesson id, kind, item id, key, number, x, y)
    regions: list[tuple[str, sky.Region]]
    links: list[tuple[float, float, float, float]]


def sky_map(version: int) -> SkyMap:
    def build() -> SkyMap:
        lessons = list(
            Lesson.objects.published()
            .select_related("subject")
            .order_by("subject__position", "subject__name", "subject_id", "public_id")
        )
        items = items_of([lesson.pk for lesson in lessons])
        keys_by_lesson: dict[int, list[tuple]] = {}
        for item in items:
            keys_by_lesson.setdefault(item[0], []).append(item)
        subjects = {lesson.subject.slug: lesson.subject.name for lesson in lessons}
        bands = sky.regions(list(subjects))
        placed_lessons, placed_items, centre_of = [], [], {}
        for slug, band in bands.items():
            in_band = [lesson for lesson in lessons if lesson.subject.slug == slug]
            centres = sky.constellation_centres(band, [lesson.public_id for lesson in in_band])
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
                    }
                )
                own = keys_by_lesson.get(lesson.pk, [])
                offsets = sky.star_offsets(lesson.public_id, [item[3] for item in own])
                for item, (dx, dy) in zip(own, offsets, strict=True):
                    placed_items.append((*item, round(x + dx, 1), round(y + dy, 1)))
        links = [
            (*centre_of[first], *centre_of[later])
            for later, first in Lesson.needs_first.through.objects.filter(
                from_lesson__in=centre_of, to_lesson__in=centre_of
            ).values_list("from_lesson_id", "to_lesson_id")
        ]
        return SkyMap(
            lessons=placed_lessons,
            items=placed_items,
            regions=[(subjects[slug], band) for slug, band in bands.items()],
            links=links,
        )

    return versioned("sky-map", version, build)


def sky_for(*, learner: Learner | None, now: datetime, version: int) -> SkyView:
    """The whole sky of a learner: one query for their memories once the map is cached."""
    layout = sky_map(version)
    memories = _memories_of(learner, lesson__status=Lesson.Status.PUBLISHED)
    config = scheduling.SchedulerSettings.from_django()
    constellations = {
        entry["pk"]: Constellation(
            entry["pk"],
            entry["public_id"],
            entry["title"],
            entry["url"],
            [],
            x=entry["x"],
            y=entry["y"],
        )
        for entry in layout.lessons
    }
    for lesson_id, kind, pk, key, number, x, y in layout.items:
        constellation = constellations[lesson_id]
        star = _star(kind, pk, key, number, constellation.title, memories, now, config)
        star.x, star.y = x, y
        constellation.stars.append(star)
    dues = [memory.due for memory, *_ in memories.values()]
    return SkyView(
        constellations=list(constellations.values()),
        regions=layout.regions,
        links=layout.links,
        forecast=sky.forecast(dues, now),
    )


def constellation_for(
    *,
    learner: Learner | None,
    lesson: Lesson,
    items: list[tuple],
    now: datetime,
    memories: dict[tuple[str, int], tuple] | None = None,
) -> Constellation:
    """One lesson's stars for this learner, laid out on their own, in one query (none when
    the lesson's memories are given)."""
    if memories is None:
        memories = lesson_memories(learner=learner, lesson=lesson)
    config = scheduling.SchedulerSettings.from_django()
    constellation = Constellation(
        lesson.pk, lesson.public_id, lesson.title, lesson.get_absolute_url(), [], x=80, y=70
    )
    offsets = sky.star_offsets(lesson.public_id, [item[3] for item in items], radius=60)
    for (_, kind, pk, key, number), (dx, dy) in zip(items, offsets, strict=True):
        star = _star(kind, pk, key, number, lesson.title, memories, now, config)
        star.x, star.y = round(80 + dx, 1), round(70 + dy, 1)
        constellation.stars.append(star)
    return constellation


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
        learned=models.Count(
            "pk",
            filter=Q(due__gt=now, evidence__gt=sky.NO_EVIDENCE) & ~Q(last_rating=scheduling.AGAIN),
        ),
        due=models.Count("pk", filter=Q(due__lte=now)),
        ever_lit=models.Count("pk", filter=Q(lit_at__isnull=False)),
    )
    return SkyCounter(**counts)


@dataclass(frozen=True)
class ProgressSummary:
    items: int
    reviews: int
    lessons: int
    first_review: datetime | None
    last_review: datetime | None


def progress_summary(*, learner: Learner) -> ProgressSummary:
    """What is stored for a learner, counted in two queries."""
    memories = Memory.objects.filter(learner=learner).aggregate(
        items=models.Count("pk"), lessons=models.Count("lesson", distinct=True)
    )
    reviews = Review.objects.filter(learner=learner).aggregate(
        count=models.Count("pk"),
        first=models.Min("reviewed_at"),
        last=models.Max("reviewed_at"),
    )
    return ProgressSummary(
        items=memories["items"],
        reviews=reviews["count"],
        lessons=memories["lessons"],
        first_review=reviews["first"],
        last_review=reviews["last"],
    )


# Item analytics for editors ---------------------------------------------------------------------


def question_stats() -> dict:
    """Annotations for a Question queryset: how learners do on each question, in SQL.

    Only learners' answers given on this site count (never imported ones or staff previews, nor
    a round's retry after the right answer was shown), and each figure reads one range
    of one index (see Review.answer_kind), whatever the number of reviews. attempts: every graded
    answer; learners: learners who answered it; right_first_share: the share of them whose first
    answer was right; lapses: wrong answers given right after a right one (a learned question
    forgotten); mean_difficulty: the mean FSRS difficulty of its memory states.
    """
    answers = (
        Review.objects.filter(
            question=OuterRef("pk"), origin=Review.Origin.ANSWERED, practice=False
        )
        .order_by()
        .values("question")
    )
    firsts = answers.filter(answer_kind=Review.Kind.FIRST)

    def per_question(queryset, aggregate) -> Subquery:
        return Subquery(queryset.annotate(value=aggregate).values("value")[:1])

    return {
        "attempts": Coalesce(per_question(answers, Count("*")), 0),
        "learners": Coalesce(per_question(firsts, Count("*")), 0),
        "right_first_share": per_question(
            firsts, Avg(Case(When(correct=True, then=1.0), default=0.0, output_field=FloatField()))
        ),
        "lapses": Coalesce(
            per_question(answers.filter(answer_kind=Review.Kind.LAPSE), Count("*")), 0
        ),
        "mean_difficulty": per_question(
            Memory.objects.filter(question=OuterRef("pk")).order_by().values("question"),
            Avg("difficulty"),
        ),
    }


def choice_picks(question: Question) -> list[dict]:
    """How often learners picked each of a question's choices."""
    counts: dict[str, int] = {}
    for answer, n in (
        Review.objects.filter(question=question, origin=Review.Origin.ANSWERED, practice=False)
        .values_list("answer")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        for choice_id in filter(None, answer.split(",")):
            counts[choice_id] = counts.get(choice_id, 0) + n
    return [choice | {"picks": counts.get(choice["id"], 0)} for choice in question.labelled_choices]


def paper_reviews(*, learner: Learner, lesson: Lesson, batch: str) -> list[Review]:
    """The reviews one typed-in worksheet recorded, in question order."""
    return list(
        Review.objects.filter(
            learner=learner, lesson=lesson, attempt__startswith=f"paper:{batch}:"
        ).order_by("question__position")
    )


# The learner's lessons: states on lesson cards, the home page's small sky, /progress ----------

# How many of the learner's lessons the home page draws: its cost follows what the learner
# touched, never the catalogue.
HOME_SKY_LESSONS = 6


def _learned_now(now: datetime) -> Q:
    """Kindled and lit stars, as sky.star_state names them: not due, not missed, some evidence."""
    return Q(due__gt=now, evidence__gt=sky.NO_EVIDENCE) & ~Q(last_rating=scheduling.AGAIN)


@dataclass(frozen=True)
class LessonProgress:
    """A started lesson's stars for one learner, as its lesson card words them."""

    stars: int
    learned: int
    due: int
    last_review: datetime | None

    @property
    def in_words(self) -> str:
        """'5 of 14 learned · 3 due': the header counter's words, for one lesson."""
        learned = f"{self.learned} of {self.stars} learned"
        return f"{learned} · {self.due} due" if self.due else learned

    @property
    def all_learned(self) -> bool:
        return self.learned >= self.stars


def _count_per_lesson(model) -> Subquery:
    return Coalesce(
        Subquery(
            model.objects.filter(lesson_id=OuterRef("lesson_id"))
            .order_by()
            .values("lesson_id")
            .annotate(n=Count("*"))
            .values("n")
        ),
        0,
    )


def lesson_progress(
    *, learner: Learner | None, now: datetime, **filters
) -> dict[int, LessonProgress]:
    """The state of each published lesson the learner has started (none: not started), by
    lesson id, in one query whose size follows the lessons they started. `filters` narrow
    the memories, e.g. lesson__subject=subject."""
    if learner is None:
        return {}
    rows = (
        Memory.objects.filter(
            learner_id=learner.pk, lesson__status=Lesson.Status.PUBLISHED, **filters
        )
        .order_by()
        .values("lesson_id")
        .annotate(
            learned=Count("pk", filter=_learned_now(now)),
            due_now=Count("pk", filter=Q(due__lte=now)),
            latest=models.Max("last_review"),
            questions=_count_per_lesson(Question),
            flashcards=_count_per_lesson(Flashcard),
        )
    )
    return {
        row["lesson_id"]: LessonProgress(
            stars=row["questions"] + row["flashcards"],
            learned=row["learned"],
            due=row["due_now"],
            last_review=row["latest"],
        )
        for row in rows
    }


@dataclass(frozen=True)
class LessonCard:
    """A lesson in a list, with its state for this learner (None: not started)."""

    lesson: Lesson
    progress: LessonProgress | None

    @property
    def subject(self) -> Subject:  # the home page groups cards by subject
        return self.lesson.subject

    @property
    def area(self) -> Area:  # and a subject page by area
        return self.lesson.area


def lesson_cards(lessons: list[Lesson], progress: dict[int, LessonProgress]) -> list[LessonCard]:
    return [LessonCard(lesson, progress.get(lesson.pk)) for lesson in lessons]


@dataclass(frozen=True)
class RecentLesson:
    constellation: Constellation
    progress: LessonProgress


def recent_constellations(
    *,
    learner: Learner | None,
    lessons: list[Lesson],
    progress: dict[int, LessonProgress],
    now: datetime,
) -> list[RecentLesson]:
    """The learner's most recently reviewed lessons among `lessons` (HOME_SKY_LESSONS at most),
    drawn as on their lesson pages, in two queries: their items and the learner's memories."""
    by_pk = {lesson.pk: lesson for lesson in lessons}
    started = [pk for pk in progress if pk in by_pk]
    started.sort(
        key=lambda pk: (progress[pk].last_review is not None, progress[pk].last_review, pk),
        reverse=True,
    )
    recent = started[:HOME_SKY_LESSONS]
    if not recent:
        return []
    items_by_lesson: dict[int, list[tuple]] = {}
    for item in items_of(recent):
        items_by_lesson.setdefault(item[0], []).append(item)
    memories = _memories_of(learner, lesson_id__in=recent)
    return [
        RecentLesson(
            constellation_for(
                learner=learner,
                lesson=by_pk[pk],
                items=items_by_lesson.get(pk, []),
                now=now,
                memories=memories,
            ),
            progress[pk],
        )
        for pk in recent
    ]


@dataclass(frozen=True)
class NextStep:
    """The home page's one call to action."""

    START, REVIEW, CONTINUE, REST = "start", "review", "continue", "rest"

    kind: str
    lesson: Lesson | None = None
    due: int = 0


def next_step(
    *,
    learner: Learner | None,
    due: int,
    recent: list[RecentLesson],
    lessons: list[Lesson],
) -> NextStep:
    """Start here for a new browser; else review what is due; else continue the latest lesson
    not yet learned, or the next lesson to learn (one query, only then)."""
    if learner is None:
        first = next_lesson_to_learn(learner=None)
        return NextStep(NextStep.START, first) if first else NextStep(NextStep.REST)
    if due:
        return NextStep(NextStep.REVIEW, due=due)
    by_pk = {lesson.pk: lesson for lesson in lessons}
    for lesson in recent:
        if not lesson.progress.all_learned:
            return NextStep(NextStep.CONTINUE, by_pk[lesson.constellation.lesson_id])
    following = next_lesson_to_learn(learner=learner)
    return NextStep(NextStep.CONTINUE, following) if following else NextStep(NextStep.REST)


@dataclass(frozen=True)
class LearningRecord:
    """What /progress leads with: lessons started, and stars learned week by week."""

    lessons_started: int
    weeks: list[tuple[datetime, int]]  # the Monday starting each week, stars first learned

    @property
    def week_bars(self) -> list[dict]:
        """The weeks as bars of a 420 x 160 chart: 96 units for the busiest week."""
        busiest = max([count for _, count in self.weeks] + [1])
        bars = []
        for index, (monday, count) in enumerate(self.weeks):
            height = round(96 * count / busiest) if count else 0
            bars.append(
                {
                    "week": monday,
                    "count": count,
                    "x": 8 + 34 * index,
                    "middle": 21 + 34 * index,
                    "y": 112 - height,
                    "height": height,
                }
            )
        return bars


LEARNING_RECORD_WEEKS = 12


def learning_record(*, learner: Learner, now: datetime) -> LearningRecord:
    """Lessons started, and how many stars were first learned (a scheduled answer that recalled
    them, sky.recalled) in each of the last weeks, in one query with a row per item answered."""
    recalled = Q(question__isnull=False, rating__gte=scheduling.GOOD) | Q(
        flashcard__isnull=False, rating__gte=scheduling.HARD
    )
    rows = (
        Review.objects.filter(
            learner_id=learner.pk, practice=False, lesson__status=Lesson.Status.PUBLISHED
        )
        .order_by()
        .values("lesson_id", "question_id", "flashcard_id")
        .annotate(first_learned=models.Min("reviewed_at", filter=recalled))
        .values_list("lesson_id", "first_learned")
    )
    this_monday = (now - timedelta(days=now.weekday())).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    first_monday = this_monday - timedelta(weeks=LEARNING_RECORD_WEEKS - 1)
    counts = [0] * LEARNING_RECORD_WEEKS
    lessons = set()
    for lesson_id, first_learned in rows:
        lessons.add(lesson_id)
        if first_learned is not None and first_learned >= first_monday:
            counts[min((first_learned - first_monday) // timedelta(weeks=1), len(counts) - 1)] += 1
    weeks = [(first_monday + timedelta(weeks=i), counts[i]) for i in range(len(counts))]
    return LearningRecord(lessons_started=len(lessons), weeks=weeks)
