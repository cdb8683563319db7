"""A large catalogue and learners built in bulk, for `make bench` and the catalogue tests.

The lessons are published but bare (one line per field, two choices per question); what they
measure is the size of the catalogue, not the text of a lesson.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from importlib import import_module

from django.conf import settings
from django.core.management import call_command
from django.db import transaction

from lessons.models import Area, ContentVersion, Lesson, Question, Subject
from practice import sky
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    Memory,
    Review,
    Round,
)

QUESTIONS = 8
CHOICES = [
    {"id": "c1", "text": "Right", "correct": True, "explanation": ""},
    {"id": "c2", "text": "Wrong", "correct": False, "explanation": "Because."},
]


def add_lessons(count: int, *, subjects: int = 10, offset: int = 0) -> list[Lesson]:
    """`count` published lessons of eight questions each, spread over `subjects` subjects (made
    when missing), in a few bulk inserts."""
    areas = []
    for n in range(subjects):
        subject, _ = Subject.objects.get_or_create(
            slug=f"catalogue-{n}", defaults={"name": f"Catalogue {n}", "position": 100 + n}
        )
        area, _ = Area.objects.get_or_create(
            subject=subject, slug="all", defaults={"name": "All lessons"}
        )
        areas.append(area)
    with transaction.atomic():
        lessons = Lesson.objects.bulk_create(
            Lesson(
                public_id=f"mt_cat{offset + n:07d}",
                slug=f"catalogue-lesson-{offset + n}",
                title=f"Catalogue lesson {offset + n}",
                summary="s",
                subject=areas[n % subjects].subject,
                area=areas[n % subjects],
                age_from=10,
                age_to=11,
                objectives="o",
                heading="h",
                body="b",
                example="e",
                recap="r",
                status=Lesson.Status.PUBLISHED,
            )
            for n in range(count)
        )
        Question.objects.bulk_create(
            Question(
                lesson=lesson,
                position=position,
                key=f"{lesson.pk:06x}{position:02x}",
                prompt="?",
                choices=CHOICES,
                explanation="x",
            )
            for lesson in lessons
            for position in range(1, QUESTIONS + 1)
        )
        # Bulk inserts send no signals: say the content changed, and index it for search.
        ContentVersion.bump()
        call_command("rebuild_search_index", verbosity=0, stdout=io.StringIO())
    return lessons


def learner_with(questions: list[Question], now: datetime) -> Learner:
    """A learner who has answered each of these questions, their stars in every state: lit,
    kindled, due and missed, by turns; in a round of each lesson, as practice pages ask them
    (finished where every question of the lesson was answered)."""
    learner = Learner.objects.create()
    rounds = _rounds_of(learner, questions, now - timedelta(days=2))
    memories, reviews = [], []
    for n, question in enumerate(questions):
        fields = {"learner": learner, "lesson_id": question.lesson_id, "question": question}
        turn = n % 4
        memories.append(
            Memory(
                **fields,
                state=2,
                stability=4.0,
                difficulty=5.0,
                due=now + timedelta(days=-1 if turn == 2 else 1 + n % 9),
                last_review=now - timedelta(days=2),
                last_rating=1 if turn == 3 else 3,
                evidence=sky.CONFIRMED if turn == 0 else sky.KINDLING,
                lit_at=now - timedelta(days=2) if turn == 0 else None,
            )
        )
        reviews.append(
            Review(
                **fields,
                round=rounds[question.lesson_id],
                round_step=question.position - 1,  # each round asks its lesson's in order
                attempt=f"catalogue-{question.pk}",
                rating=1 if turn == 3 else 3,
                reviewed_at=now - timedelta(days=2),
                answer="c1" if turn != 3 else "c2",
                correct=turn != 3,
            )
        )
    Memory.objects.bulk_create(memories)
    Review.objects.bulk_create(reviews)
    return learner


def _rounds_of(learner: Learner, questions: list[Question], when: datetime) -> dict[int, Round]:
    """A round by lesson for each lesson of `questions`, stored, asking its questions in order."""
    answered = {question.pk for question in questions}
    orders: dict[int, list[int]] = {}
    for lesson_id, pk in (
        Question.objects.filter(lesson_id__in={question.lesson_id for question in questions})
        .order_by("lesson_id", "position")
        .values_list("lesson_id", "pk")
    ):
        orders.setdefault(lesson_id, []).append(pk)
    made = Round.objects.bulk_create(
        Round(
            learner=learner,
            lesson_id=lesson_id,
            key=f"catalogue-{lesson_id}",
            started_at=when,
            finished_at=when if answered.issuperset(order) else None,
            question_order=order,
        )
        for lesson_id, order in orders.items()
    )
    return {round_.lesson_id: round_ for round_ in made}


def learner_of_lessons(lessons: list[Lesson], now: datetime) -> Learner:
    """A learner who has answered every question of these lessons."""
    return learner_with(
        list(Question.objects.filter(lesson__in=lessons).order_by("lesson_id", "position")), now
    )


def session_of(learner: Learner) -> str:
    """A stored session for this learner: the key a browser would send as its cookie."""
    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[LEARNER_SESSION_KEY] = learner.public_id
    session[LEARNER_PK_SESSION_KEY] = learner.pk
    session.create()
    assert session.session_key is not None
    return session.session_key
