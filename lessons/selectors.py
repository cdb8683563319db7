"""Reads of lesson content for pages, cached under the content version."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import models

from lessons.models import Flashcard, Lesson, Question
from lessons.structured_data import learning_resource
from lightmysky.lib.versioned import versioned

# (lesson id, "question" or "flashcard", item id, item key, number within its kind)
Item = tuple[int, str, int, str, int]


@dataclass
class LessonPage:
    """Everything the lesson page and its twin show about the lesson, the same for everyone."""

    lesson: Lesson
    needs_first: list[Lesson]
    connections: list[Lesson]
    opens_up: list[Lesson]
    questions: list[Question]
    items: list[Item]
    structured_data: str

    def context(self) -> dict:
        return {
            "lesson": self.lesson,
            "page_url": settings.SITE_URL + self.lesson.get_absolute_url(),
            "needs_first": self.needs_first,
            "connections": self.connections,
            "opens_up": self.opens_up,
            "questions": self.questions,
            "structured_data": self.structured_data,
        }


def items_of(lesson_ids) -> list[Item]:
    """Every question and flashcard of these lessons in one query, in a fixed order."""
    kind = models.CharField()
    questions = (
        Question.objects.filter(lesson_id__in=lesson_ids)
        .order_by()
        .values_list("lesson_id", models.Value("question", kind), "pk", "key", "position")
    )
    flashcards = (
        Flashcard.objects.filter(lesson_id__in=lesson_ids)
        .order_by()
        .values_list("lesson_id", models.Value("flashcard", kind), "pk", "key", "position")
    )
    items = list(questions.union(flashcards, all=True))
    items.sort(key=lambda row: (row[0], row[1] != "question", row[4], row[2]))
    return items


def lesson_page(public_id: str, version: int) -> LessonPage | None:
    """The lesson with its neighbours, questions and items: four queries once per version."""

    def build() -> LessonPage | None:
        lesson = Lesson.objects.for_page().filter(public_id=public_id).first()
        if lesson is None:
            return None
        neighbours = list(Lesson.objects.neighbours_of(lesson))
        questions = list(lesson.questions.all())
        return LessonPage(
            lesson=lesson,
            needs_first=[n for n in neighbours if n.is_needed_first],
            connections=[n for n in neighbours if n.is_connection],
            opens_up=[n for n in neighbours if n.is_opened_up],
            questions=questions,
            items=items_of([lesson.pk]),
            structured_data=learning_resource(lesson, questions),
        )

    return versioned(f"lesson-page:{public_id}", version, build)
