"""The reads written out in SQL for speed read what their ORM queries read: the header's counts
(the sky's rule: the stars sky.star_state shows kindled or lit, due and ever lit are what
sky.counter_conditions counts with the ORM, and what sky_counter's query counts, over published
lessons only) and the first item /review asks."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

from lessons.models import Lesson
from practice import scheduling, sky
from practice.models import Learner, Memory, Review
from practice.selectors import first_due, first_due_by_orm
from practice.selectors.stars import SkyCounter, sky_counter, sky_counter_by_orm
from tests.factories import make_lesson

pytestmark = pytest.mark.django_db


def memories_of_every_kind(learner: Learner, lessons: list[Lesson]) -> None:
    """A memory for each mix of due (past, now, future), missed mark, evidence and first-lit
    moment, spread over the lessons' questions and flashcards."""
    now = timezone.now()
    items = [
        (lesson, question, None) for lesson in lessons for question in lesson.questions.all()
    ] + [(lesson, None, card) for lesson in lessons for card in lesson.flashcards.all()]
    kinds = itertools.product(
        (now - timedelta(days=2), now + timedelta(hours=1), now + timedelta(days=9)),
        (False, True),
        (sky.NO_EVIDENCE, sky.KINDLING, sky.CONFIRMED),
        (None, now - timedelta(days=5)),
    )
    for (lesson, question, card), (due, missed, evidence, lit_at) in zip(
        items, kinds, strict=False
    ):
        Memory.objects.create(
            learner=learner,
            lesson=lesson,
            question=question,
            flashcard=card,
            state=2,
            stability=4.0,
            difficulty=5.0,
            due=due,
            last_review=now - timedelta(days=3),
            last_rating=scheduling.AGAIN if missed else scheduling.GOOD,
            missed=missed,
            evidence=evidence,
            lit_at=lit_at,
        )


def counted_by_the_star_rule(learner: Learner, now) -> SkyCounter:
    states, ever_lit = [], 0
    for memory in Memory.objects.filter(learner=learner, lesson__status=Lesson.Status.PUBLISHED):
        states.append(
            sky.star_state(memory.memory_state, now, evidence=memory.evidence, missed=memory.missed)
        )
        ever_lit += memory.lit_at is not None
    return SkyCounter(
        lit=sum(state.word == sky.LIT for state in states),
        kindled=sum(state.word == sky.KINDLED for state in states),
        due=sum(state.is_due for state in states),
        ever_lit=ever_lit,
    )


def test_the_counters_query_the_orms_and_the_star_rule_count_alike():
    learner = Learner.objects.create()
    published = [make_lesson(slug=f"counted-{n}", flashcards=6) for n in range(4)]
    draft = make_lesson(slug="a-draft", status=Lesson.Status.DRAFT)
    memories_of_every_kind(learner, [*published, draft])
    memories_of_every_kind(Learner.objects.create(), published)  # someone else's
    for later in (timedelta(0), timedelta(hours=2), timedelta(days=3), timedelta(days=30)):
        now = timezone.now() + later
        expected = counted_by_the_star_rule(learner, now)
        assert sky_counter_by_orm(learner=learner, now=now) == expected
        assert sky_counter(learner=learner, now=now) == expected
    assert expected.lit > 0 and expected.kindled > 0 and expected.ever_lit > 0
    early = counted_by_the_star_rule(learner, timezone.now())
    assert early.due < expected.due


def test_the_first_item_due_is_the_one_the_orms_query_orders_first():
    """first_due's query (written out, for speed) picks the item first_due_by_orm's order puts
    first, at every moment: unknown stability first, then the least likely remembered."""
    learner = Learner.objects.create()
    lessons = [make_lesson(slug=f"due-{n}", flashcards=6) for n in range(3)]
    memories_of_every_kind(learner, lessons)
    now = timezone.now()
    for memory, stability, days_ago in zip(
        Memory.objects.filter(learner=learner).order_by("pk"),
        itertools.cycle((0.5, 3.0, 20.0, None, 0.0)),
        itertools.cycle((1, 4, 9, 30)),
        strict=False,
    ):
        memory.stability = stability
        memory.last_review = None if days_ago == 30 and stability else now - timedelta(days_ago)
        memory.save()
    draft = make_lesson(slug="due-draft", status=Lesson.Status.DRAFT)
    memories_of_every_kind(learner, [draft])  # never asked: not published
    # Answers seen within the sitting hold their items back, a question's and a card's alike;
    # one answered just over the sitting ago does not.
    for step, memory in enumerate(Memory.objects.filter(learner=learner).order_by("pk")[:9]):
        Review.objects.create(
            learner=learner,
            lesson_id=memory.lesson_id,
            question_id=memory.question_id,
            flashcard_id=memory.flashcard_id,
            attempt=f"seen-{step}",
            rating=3,
            reviewed_at=now - timedelta(minutes=(20, 59, 61)[step % 3]),
            answer="A",
            practice=True,
        )
    asked = []
    for later in (timedelta(0), timedelta(days=1), timedelta(days=5), timedelta(days=40)):
        first = first_due(learner=learner, now=now + later)
        assert first == first_due_by_orm(learner=learner, now=now + later)
        assert first is not None and first.lesson.is_published
        asked.append(first)
        first.due = now + timedelta(days=365)  # answered: the next moment asks another
        first.save()
    assert len(set(asked)) == len(asked)
