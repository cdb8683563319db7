"""Reads of lesson content for pages, cached under the content version."""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple, cast

from django.conf import settings
from django.db import connection, models

from lessons.models import Area, Flashcard, Lesson, Question, Subject
from lessons.structured_data import learning_resource
from lightmysky.lib import rawrows
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
    """Everything the lesson page and its twin show about the lesson, the same for everyone.

    The lesson, its questions and its stars are read at once: every page of the lesson and every
    answer needs them. Its neighbours and its structured data are read when first asked for, by
    the lesson page: a worker that meets a lesson first through its practice page or an answer
    (another worker served the lesson page) does not build what it does not show. Kept in each
    process's memory and shared by its requests, the page keeps them once built."""

    lesson: Lesson
    questions: list[Question]
    items: list[Item]

    @functools.cached_property
    def _neighbours(self) -> list[Lesson]:
        return Lesson.objects.neighbours_of(self.lesson)

    @property
    def needs_first(self) -> list[Lesson]:
        return [n for n in self._neighbours if n.is_needed_first]

    @property
    def connections(self) -> list[Lesson]:
        return [n for n in self._neighbours if n.is_connection]

    @property
    def opens_up(self) -> list[Lesson]:
        return [n for n in self._neighbours if n.is_opened_up]

    @functools.cached_property
    def structured_data(self) -> str:
        return learning_resource(self.lesson, self.questions)

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
    return sorted((Item(*row) for row in questions.union(flashcards, all=True)), key=_item_order)


def _item_order(item: Item) -> tuple:
    """Stars in their fixed order: by lesson, its questions before its flashcards, by position."""
    return (item.lesson_id, item.kind != "question", item.number, item.pk)


def lesson_page(public_id: str, version: int) -> LessonPage | None:
    """The lesson with its questions and items, three queries once per version in each process
    (and its neighbours, one more, when the lesson page first shows them)."""
    return versioned_in_memory(
        f"lesson-page:{public_id}", version, lambda: _lesson_page_build(public_id)
    )


def _lesson_page_build(public_id: str) -> LessonPage | None:
    """The lesson as `Lesson.objects.for_page()` reads it (with its subject, area and question
    count), its questions in order, each knowing its lesson, as `lesson.questions.all()` reads
    them, and its items in `items_of`'s order. Written out (lightmysky.lib.rawrows): every
    process builds each lesson's page once in each content version, and an answer or a practice
    page that meets the lesson first paid 1 ms of query building for it, as much as the rest
    of the request."""
    found = rawrows.instances(_lesson_sql(), [public_id], (Lesson, Subject, Area))
    if not found:
        return None
    lesson, subject, area = cast(tuple[Lesson, Subject, Area], found[0])
    lesson.subject, lesson.area = subject, area
    questions = [
        cast(Question, question)
        for (question,) in rawrows.instances(_questions_sql(), [lesson.pk], (Question,))
    ]
    for question in questions:
        question.lesson = lesson
    lesson.question_count = len(questions)
    with connection.cursor() as cursor:
        cursor.execute(_flashcard_items_sql(), [lesson.pk])
        flashcards = [Item(lesson.pk, "flashcard", *row) for row in cursor.fetchall()]
    items = [Item(lesson.pk, "question", q.pk, q.key, q.position) for q in questions]
    return LessonPage(
        lesson=lesson, questions=questions, items=sorted(items + flashcards, key=_item_order)
    )


@functools.cache
def _lesson_sql() -> str:
    return (
        f"SELECT {rawrows.columns(Lesson, 'l')}, {rawrows.columns(Subject, 's')},"
        f" {rawrows.columns(Area, 'a')} FROM {Lesson._meta.db_table} l"
        f" INNER JOIN {Subject._meta.db_table} s ON s.id = l.subject_id"
        f" INNER JOIN {Area._meta.db_table} a ON a.id = l.area_id WHERE l.public_id = %s"
    )


@functools.cache
def _questions_sql() -> str:
    return (
        f"SELECT {rawrows.columns(Question, 'q')} FROM {Question._meta.db_table} q"
        " WHERE q.lesson_id = %s ORDER BY q.position, q.id"
    )


@functools.cache
def _flashcard_items_sql() -> str:
    return (
        f"SELECT f.id, f.key, f.position FROM {Flashcard._meta.db_table} f WHERE f.lesson_id = %s"
    )


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
