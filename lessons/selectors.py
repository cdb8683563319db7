"""Reads of lesson content for pages, cached under the content version."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.db import models

from lessons.models import Flashcard, Lesson, Question
from lessons.structured_data import learning_resource
from lightmysky.lib.versioned import versioned, versioned_in_memory


class Item(NamedTuple):
    """A star of a lesson's constellation: one of its questions or flashcards."""

    lesson_id: int
    kind: str  # "question" or "flashcard"
    pk: int
    key: str
    number: int  # its position among the lesson's questions, or among its flashcards


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
    items = [Item(*row) for row in questions.union(flashcards, all=True)]
    items.sort(key=lambda item: (item.lesson_id, item.kind != "question", item.number, item.pk))
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

    return versioned_in_memory(f"lesson-page:{public_id}", version, build)


@dataclass(frozen=True)
class PrintedWorksheet:
    """A published lesson whose worksheet, as printed today, carries a given code."""

    title: str
    answers_url: str


def normalise_worksheet_code(text: str) -> str:
    """A code as typed (any case, with spaces or dashes) as it is printed."""
    return "".join(character for character in text if character.isalnum()).upper()[:12]


def worksheets_by_code(version: int) -> dict[str, list[PrintedWorksheet]]:
    """Every published lesson under its worksheet's code: two queries once per version, so a
    short address on paper (`/w/<code>`) finds its lesson without a table of codes."""

    def build() -> dict[str, list[PrintedWorksheet]]:
        published = Lesson.objects.published()
        lessons = published.select_related("subject").only(
            "public_id", "slug", "title", "subject__slug"
        )
        questions = Question.objects.filter(lesson__in=published).only(
            "lesson_id", "position", "key", "prompt", "choices"
        )
        by_lesson: dict[int, list[Question]] = defaultdict(list)
        for question in questions.order_by("lesson_id", "position"):
            by_lesson[question.lesson_id].append(question)
        found: dict[str, list[PrintedWorksheet]] = defaultdict(list)
        for lesson in lessons.order_by("title", "pk"):
            code = lesson.worksheet_code(by_lesson[lesson.pk])
            found[code].append(PrintedWorksheet(lesson.title, lesson.get_worksheet_answers_url()))
        return dict(found)

    return versioned("worksheet-answers-by-code", version, build)
