"""A learner's stars: each item's state from their memory of it (practice.sky's rule), a
lesson's constellation, the header's counter, and what an answer or a round did to the stars."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, FilteredRelation, Q, Subquery
from django.db.models.functions import Coalesce

from lessons.models import Lesson, Question
from lessons.selectors import Item, LessonPage
from practice import scheduling, sky
from practice.drawing import Constellation, Star
from practice.models import Learner, Memory, Review, RoundProgress
from practice.selectors import MEMORY_COLUMNS, Memories, lesson_memories, memories_from


@dataclass(frozen=True)
class SkyCounter:
    learned: int  # kindled and lit stars
    due: int
    ever_lit: int


def sky_counter(*, learner: Learner, now: datetime) -> SkyCounter:
    """The header's '12 learned so far · 3 due' and the stars ever lit, in one query: the same
    counts as the sky's (sky.star_state), over the same published lessons."""
    conditions = sky.counter_conditions(now)
    counts = (
        Memory.objects.filter(learner_id=learner.pk)
        .in_published_lessons()
        .aggregate(
            **{name: Count("pk", filter=condition) for name, condition in conditions.items()}
        )
    )
    return SkyCounter(**counts)


def lesson_memories_and_counter(
    *, learner: Learner, lesson: Lesson, now: datetime
) -> tuple[Memories, SkyCounter]:
    """The learner's memories of a lesson's items and the header's counter, in one query: the
    lesson's row joined to the learner's memories of it (none, for a lesson not started), each
    row carrying the counts that `sky_counter` reads."""
    theirs = (
        Memory.objects.filter(learner_id=learner.pk)
        .in_published_lessons()
        .order_by()
        .values("learner_id")
    )
    counts = {
        name: Coalesce(Subquery(theirs.filter(condition).annotate(n=Count("pk")).values("n")), 0)
        for name, condition in sky.counter_conditions(now).items()
    }
    rows = list(
        Lesson.objects.filter(pk=lesson.pk)
        .alias(mine=FilteredRelation("memory", condition=Q(memory__learner_id=learner.pk)))
        .annotate(**counts)
        .values_list(*(f"mine__{column}" for column in MEMORY_COLUMNS), *counts)
    )
    width = len(MEMORY_COLUMNS)
    counter = SkyCounter(*rows[0][width:]) if rows else SkyCounter(learned=0, due=0, ever_lit=0)
    return memories_from(row[:width] for row in rows), counter


def lesson_stars(*, learner: Learner | None, page: LessonPage, now: datetime) -> dict:
    """A lesson's constellation for this learner, the header's counter (None for a visitor) and
    the memories they are drawn from, as a page's context, in one query."""
    if learner is None:
        memories: Memories = {}
        counter = None
    else:
        memories, counter = lesson_memories_and_counter(
            learner=learner, lesson=page.lesson, now=now
        )
    constellation = constellation_for(
        learner=learner, lesson=page.lesson, items=page.items, now=now, memories=memories
    )
    return {"constellation": constellation, "sky_counter": counter, "memories": memories}


def star(
    kind: str,
    pk: int,
    key: str,
    number: int,
    title: str,
    memories: Memories,
    now: datetime,
    config: scheduling.SchedulerSettings,
    *,
    x: float,
    y: float,
) -> Star:
    """One item's star where it is drawn, in the state the learner's memory of it gives."""
    memory, last_rating, evidence, ever_lit = memories.get(
        (kind, pk), (None, None, sky.NO_EVIDENCE, False)
    )
    state = sky.star_state(memory, last_rating, now, config, evidence=evidence)
    label = f"{kind.capitalize()} {number} of {title}: {state.describe(now)}"
    return Star(kind, number, key, label, state, x, y, ever_lit=ever_lit)


def constellation_for(
    *,
    learner: Learner | None,
    lesson: Lesson,
    items: Sequence[Item],
    now: datetime,
    memories: Memories | None = None,
) -> Constellation:
    """One lesson's stars for this learner, laid out on their own: one query for the learner's
    memories of the lesson, none when they are given."""
    if memories is None:
        memories = lesson_memories(learner=learner, lesson=lesson)
    config = scheduling.SchedulerSettings.from_django()
    offsets = sky.star_offsets(lesson.public_id, tuple(item.key for item in items), radius=60)
    stars = tuple(
        star(
            kind,
            pk,
            key,
            number,
            lesson.title,
            memories,
            now,
            config,
            x=round(80 + dx, 1),
            y=round(70 + dy, 1),
        )
        for (_, kind, pk, key, number), (dx, dy) in zip(items, offsets, strict=True)
    )
    return Constellation(
        lesson.pk, lesson.public_id, lesson.title, lesson.get_absolute_url(), stars, x=80, y=70
    )


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


def round_outcome(progress: RoundProgress, constellation: Constellation, now: datetime) -> dict:
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
