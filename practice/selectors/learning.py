"""The learner's lessons: states on lesson cards, the home page's small sky, /progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import models
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from lessons.models import Area, Flashcard, Lesson, Question, Subject
from lessons.selectors import Item, items_of
from lightmysky.lib import charts
from practice import sky
from practice.drawing import Constellation
from practice.models import Learner, Memory, Review
from practice.selectors import memories_of, next_lesson_to_learn
from practice.selectors.stars import constellation_for


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


# How many of the learner's lessons the home page draws: its cost follows what the learner
# touched, never the catalogue.
HOME_SKY_LESSONS = 6


@dataclass(frozen=True)
class LessonProgress:
    """A started lesson's stars for one learner, as its lesson card words them."""

    stars: int
    lit: int
    kindled: int
    due: int
    last_review: datetime | None
    answered: int  # items answered or rated at least once: each has its memory
    questions_left: int = 0  # of those never answered, the questions (the rest: flashcards)

    @property
    def in_words(self) -> str:
        """'5 lit · 2 kindled of 14 · 3 due': the header counter's words, for one lesson."""
        earned = f"{self.lit} lit · {self.kindled} kindled of {self.stars}"
        return f"{earned} · {self.due} due" if self.due else earned

    @property
    def all_answered(self) -> bool:
        """Every item has been met: each now comes back through /review when it is due."""
        return self.answered >= self.stars


def _count_per_lesson(model) -> Coalesce:
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
            lit=Count("pk", filter=sky.counter_conditions(now)["lit"]),
            kindled=Count("pk", filter=sky.counter_conditions(now)["kindled"]),
            due_now=Count("pk", filter=sky.counter_conditions(now)["due"]),
            latest=models.Max("last_review"),
            answered=Count("pk"),
            questions_answered=Count("pk", filter=Q(question__isnull=False)),
            questions=_count_per_lesson(Question),
            flashcards=_count_per_lesson(Flashcard),
        )
    )
    return {
        row["lesson_id"]: LessonProgress(
            stars=row["questions"] + row["flashcards"],
            lit=row["lit"],
            kindled=row["kindled"],
            due=row["due_now"],
            last_review=row["latest"],
            answered=row["answered"],
            questions_left=max(row["questions"] - row["questions_answered"], 0),
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


def _last_answered(progress: dict[int, LessonProgress]) -> Callable[[int], tuple]:
    """A sort key for lesson ids: the lesson answered last sorts last, one never answered (only
    imported) first."""
    return lambda pk: (progress[pk].last_review is not None, progress[pk].last_review, pk)


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
    started = sorted(
        (pk for pk in progress if pk in by_pk), key=_last_answered(progress), reverse=True
    )
    recent = started[:HOME_SKY_LESSONS]
    if not recent:
        return []
    items_by_lesson: dict[int, list[Item]] = {}
    for item in items_of(recent):
        items_by_lesson.setdefault(item.lesson_id, []).append(item)
    memories = memories_of(learner, lesson_id__in=recent)
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
    """The one call to action of the home page, and of /review once nothing is due."""

    START, REVIEW, CONTINUE, NEW, REST = "start", "review", "continue", "new", "rest"

    kind: str
    lesson: Lesson | None = None
    due: int = 0
    cards_left_only: bool = False  # continuing: every question answered, flashcards not rated

    @property
    def lesson_label(self) -> str:
        """What the link to self.lesson says before its title."""
        if self.cards_left_only:
            return "Continue with the flashcards"
        return {
            self.START: "Start here",
            self.CONTINUE: "Continue",
            self.NEW: "Learn something new",
        }[self.kind]

    @property
    def lesson_url(self) -> str:
        """The lesson's page, or its flashcards when they are all that is left to meet."""
        if self.lesson is None:
            return ""
        if self.cards_left_only:
            return self.lesson.get_flashcards_url()
        return self.lesson.get_absolute_url()


def next_step(
    *,
    learner: Learner | None,
    due: int,
    progress: dict[int, LessonProgress],
    lessons: dict[int, Lesson] | None = None,
) -> NextStep:
    """Start here for a new browser; else review what is due; else continue the lesson answered
    most recently that has items never answered; else learn the next lesson. Home, which has
    read the catalogue, passes `lessons` by pk; /review reads the one lesson it names."""
    if learner is None:
        first = next_lesson_to_learn(learner=None)
        return NextStep(NextStep.START, first) if first else NextStep(NextStep.REST)
    if due:
        return NextStep(NextStep.REVIEW, due=due)
    unfinished = [pk for pk, lesson in progress.items() if not lesson.all_answered]
    if unfinished:
        latest = max(unfinished, key=_last_answered(progress))
        lesson = (
            lessons.get(latest)
            if lessons is not None
            else Lesson.objects.published().select_related("subject").filter(pk=latest).first()
        )
        if lesson is not None:
            cards_only = not progress[latest].questions_left
            return NextStep(NextStep.CONTINUE, lesson, cards_left_only=cards_only)
    following = next_lesson_to_learn(learner=learner)
    return NextStep(NextStep.NEW, following) if following else NextStep(NextStep.REST)


@dataclass(frozen=True)
class LearningRecord:
    """What /progress leads with: lessons started, and stars first lit week by week."""

    lessons_started: int
    weeks: list[tuple[datetime, int]]  # the Monday starting each week, stars first lit
    # When each of those stars first lit (and those lit the day before the first week), for
    # the page's script, which counts them by the learner's own weeks (these are UTC's).
    lit_moments: list[datetime]

    @property
    def week_bars(self) -> list[charts.Bar]:
        return charts.bars(self.weeks, left=8, step=34, width=26)


LEARNING_RECORD_WEEKS = 12


def learning_record(*, learner: Learner, now: datetime) -> LearningRecord:
    """Lessons started, and how many stars were first lit in each week since the learner
    began (at most the last LEARNING_RECORD_WEEKS), in one query with a row per item answered."""
    rows = list(
        Memory.objects.filter(learner_id=learner.pk)
        .in_published_lessons()
        .values_list("lesson_id", "lit_at", "learner__created_at")
    )
    # When the learner began: a progress file can bring stars lit before this browser began.
    began = min([now, *(moment for row in rows for moment in row[1:] if moment is not None)])
    this_monday = _monday(now)
    earliest = this_monday - timedelta(weeks=LEARNING_RECORD_WEEKS - 1)
    first_monday = max(_monday(began), earliest)
    counts = [0] * ((this_monday - first_monday) // timedelta(weeks=1) + 1)
    lessons = set()
    lit_moments = []
    for lesson_id, lit_at, _ in rows:
        lessons.add(lesson_id)
        if lit_at is None or lit_at < first_monday - timedelta(days=1):
            continue
        lit_moments.append(lit_at)
        if lit_at >= first_monday:
            counts[min((lit_at - first_monday) // timedelta(weeks=1), len(counts) - 1)] += 1
    weeks = [(first_monday + timedelta(weeks=i), counts[i]) for i in range(len(counts))]
    return LearningRecord(lessons_started=len(lessons), weeks=weeks, lit_moments=lit_moments)


def _monday(moment: datetime) -> datetime:
    """The start of the week a moment falls in."""
    return (moment - timedelta(days=moment.weekday())).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
