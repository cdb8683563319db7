"""Reads of lesson content for pages, cached under the content version."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect

from lessons.models import ContentVersion, Flashcard, Lesson, Question
from lessons.structured_data import learning_resource
from lightmysky.lib.versioned import versioned


class Item(NamedTuple):
    """A star of a lesson's constellation: one of its questions or flashcards."""

    lesson_id: int
    kind: str  # "question" or "flashcard"
    pk: int
    key: str
    number: int  # its position among the lesson's questions, or among its flashcards


@dataclass
class LessonPage:
    """What every page of a lesson and every answer to it needs of the lesson, the same for
    everyone: the lesson with its subject and area, its questions in order, its stars, and its
    structured data. Cached under the content version (`lesson_page`)."""

    lesson: Lesson
    questions: list[Question]
    items: list[Item]
    structured_data: str
    version: int

    def neighbours(self) -> list[Lesson]:
        """The lessons it links to or from, flagged by how (one query once per version): read
        apart, by the lesson page only, so its practice pages and answers do not wait for them."""
        return versioned(
            f"lesson-neighbours:{self.lesson.pk}",
            self.version,
            lambda: Lesson.objects.neighbours_of(self.lesson),
        )

    def context(self) -> dict:
        neighbours = self.neighbours()

        def related(how: str) -> list[Lesson]:  # an annotation of Lesson.objects.neighbours_of
            return [neighbour for neighbour in neighbours if getattr(neighbour, how)]

        return {
            "lesson": self.lesson,
            "page_url": settings.SITE_URL + self.lesson.get_absolute_url(),
            "needs_first": related("is_needed_first"),
            "connections": related("is_connection"),
            "opens_up": related("is_opened_up"),
            "questions": self.questions,
            "flashcard_count": sum(item.kind == "flashcard" for item in self.items),
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
    """The lesson's page data (None: no such lesson), three queries once per content version in
    each process."""
    return versioned(f"lesson-page:{public_id}", version, lambda: _lesson_page(public_id, version))


def _lesson_page(public_id: str, version: int) -> LessonPage | None:
    lesson = Lesson.objects.select_related("subject", "area").filter(public_id=public_id).first()
    if lesson is None:
        return None
    questions = list(lesson.questions.order_by("position", "pk"))
    for question in questions:
        question.lesson = lesson
    lesson.question_count = len(questions)
    flashcards = lesson.flashcards.values_list("pk", "key", "position")
    items = [Item(lesson.pk, "question", q.pk, q.key, q.position) for q in questions]
    items += [Item(lesson.pk, "flashcard", *row) for row in flashcards]
    return LessonPage(
        lesson=lesson,
        questions=questions,
        items=sorted(items, key=_item_order),
        structured_data=learning_resource(lesson, questions),
        version=version,
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


# A lesson as a view finds it from its address: its page data, a 404, or the canonical address.


def visible_page_or_404(request: HttpRequest, public_id: str) -> LessonPage:
    """The lesson's cached page data if this visitor may see it: drafts only for staff."""
    page = lesson_page(public_id, ContentVersion.for_request(request))
    if page is None or (not page.lesson.is_published and not request.user.is_staff):
        raise Http404("No lesson has this address.")
    return page


def page_or_redirect(
    request: HttpRequest,
    subject: str,
    public_id: str,
    slug: str | None,
    url_name: str = "lessons:lesson",
) -> LessonPage | HttpResponse:
    """A lesson view's page data, or for a read at a wrong address the 301 to the right one:
    the address named `url_name` of the lesson."""
    page = visible_page_or_404(request, public_id)
    if request.method != "POST" and (
        redirect := redirect_if_not_canonical(request, page.lesson, subject, slug, url_name)
    ):
        return redirect
    return page


def redirect_if_not_canonical(
    request: HttpRequest,
    lesson: Lesson,
    subject: str,
    slug: str | None,
    url_name: str = "lessons:lesson",
) -> HttpResponse | None:
    if subject == lesson.subject.slug and slug == lesson.slug:
        return None
    target = lesson.get_url(url_name)
    if query := request.META.get("QUERY_STRING"):
        target += "?" + query
    return HttpResponsePermanentRedirect(target)
