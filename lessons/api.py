"""The public JSON API: read-only content, and answer checking that stores nothing."""

from __future__ import annotations

import re
from typing import Annotated

from django.conf import settings
from django.db.models import Count, Q
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema
from ninja.errors import HttpError

from lessons import search as lesson_search
from lessons.models import (
    PUBLIC_ID_PATTERN,
    AnswerNotAccepted,
    Grade,
    Lesson,
    Question,
    Subject,
)
from lightmysky.ratelimit import retry_after

router = Router(tags=["lessons"])
PUBLIC_ID_RE = re.compile(rf"^{PUBLIC_ID_PATTERN}$")


class RateLimited(Exception):
    def __init__(self, wait: int) -> None:
        super().__init__(f"Too many checks from this address: try again in {wait} seconds.")
        self.wait = wait


class Error(Schema):
    detail: str


class SubjectOut(Schema):
    slug: str
    name: str
    description: str
    lesson_count: int
    url: str
    markdown_url: str


class LessonSummary(Schema):
    id: str = Field(description="The lesson's public id, like mt__e-JwIxHek.")
    title: str
    summary: str
    subject: str = Field(description="The subject's slug.")
    area: str = Field(description="The area's slug.")
    age_from: int
    age_to: int
    url: str
    markdown_url: str
    updated_at: str


class LessonPage(Schema):
    count: int
    page: int
    pages: int
    results: list[LessonSummary]


class LessonLink(Schema):
    id: str
    title: str
    url: str


class LessonDetail(LessonSummary):
    objectives: list[str]
    heading: str
    body: str = Field(description="Markdown.")
    example: str = Field(description="The worked example, Markdown.")
    tip: str
    recap: str
    credits: str
    question_count: int
    flashcard_count: int = Field(
        description="Its flashcards, rated by the learner in a browser; with the questions, "
        "each is a star of the learner's sky."
    )
    needs_first: list[LessonLink]
    opens_up: list[LessonLink]
    connections: list[LessonLink]


class ChoiceOut(Schema):
    letter: str = Field(description="The choice's letter in the written order, A to F.")
    id: str = Field(description="The choice's identity: it stays when choices are reordered.")
    text: str
    correct: bool
    explanation: str = Field(description="Why this choice is wrong; empty for right ones.")


class QuestionOut(Schema):
    number: int
    key: str = Field(
        description="The question's identity: it stays when questions are reordered, and a "
        "learner's progress file names the question by it (`question:KEY`)."
    )
    prompt: str
    choices: list[ChoiceOut]
    answer: list[str] = Field(description="The letters of the right choices.")
    multiple: bool = Field(description="True when more than one choice is right.")
    explanation: str = Field(description="Why the right answer is right, Markdown.")


# Letters are checked by the question's own grading rule, so the API refuses a bad answer with
# the same 400 and words as the practice round.
Letter = Annotated[
    str, Field(max_length=200, description="A choice's letter, A to F, or its `id`.")
]


class AnswerIn(Schema):
    answer: list[Letter] = Field(
        max_length=6, description='Letters (or ids) of the chosen choices, like ["B"].'
    )


class CheckedChoice(ChoiceOut):
    picked: bool


class CheckOut(Schema):
    correct: bool
    answer: list[str]
    explanation: str
    choices: list[CheckedChoice]


def _url(path: str) -> str:
    return settings.SITE_URL + path


def _summary(lesson: Lesson) -> dict:
    return {
        "id": lesson.public_id,
        "title": lesson.title,
        "summary": lesson.summary,
        "subject": lesson.subject.slug,
        "area": lesson.area.slug,
        "age_from": lesson.age_from,
        "age_to": lesson.age_to,
        "url": _url(lesson.get_absolute_url()),
        "markdown_url": _url(lesson.get_markdown_url()),
        "updated_at": lesson.updated_at.isoformat(),
    }


def _published_lesson(public_id: str) -> Lesson:
    if not PUBLIC_ID_RE.match(public_id):
        raise HttpError(404, f"No published lesson has the id {public_id[:20]!r}.")
    lesson = Lesson.objects.published().for_page().filter(public_id=public_id).first()
    if lesson is None:
        raise HttpError(404, f"No published lesson has the id {public_id!r}.")
    return lesson


def _question(lesson: Lesson, number: int) -> Question:
    question = lesson.questions.filter(position=number).first()
    if question is None:
        raise HttpError(404, f"Lesson {lesson.public_id} has no question {number}.")
    return question


def _grade_letters_or_ids(question: Question, answer: list[str]) -> Grade:
    """A choice named by its letter, or else by its id (an id may look like a letter: "b")."""
    letters = {choice["letter"] for choice in question.labelled_choices}
    letter_of_id = {choice["id"]: choice["letter"] for choice in question.labelled_choices}
    named = [
        given if given.strip().upper() in letters else letter_of_id.get(given.strip(), given)
        for given in answer
    ]
    try:
        return question.grade_letters(named)
    except AnswerNotAccepted as error:
        raise HttpError(400, str(error)) from None


def _question_out(question: Question) -> dict:
    return {
        "number": question.position,
        "key": question.key,
        "prompt": question.prompt,
        "choices": [
            {
                "letter": c["letter"],
                "id": c["id"],
                "text": c["text"],
                "correct": c["correct"],
                "explanation": c.get("explanation", ""),
            }
            for c in question.labelled_choices
        ],
        "answer": question.correct_letters,
        "multiple": question.takes_several,
        "explanation": question.explanation,
    }


@router.get("/subjects", response=list[SubjectOut], summary="List subjects")
def list_subjects(request: HttpRequest):
    subjects = Subject.objects.annotate(
        lesson_count=Count("lessons", filter=Q(lessons__status=Lesson.Status.PUBLISHED))
    ).filter(lesson_count__gt=0)
    return [
        {
            "slug": s.slug,
            "name": s.name,
            "description": s.description,
            "lesson_count": s.lesson_count,
            "url": _url(s.get_absolute_url()),
            "markdown_url": _url(s.get_markdown_url()),
        }
        for s in subjects
    ]


class LessonFilters(Schema):
    subject: str | None = Field(
        None, max_length=100, pattern=r"^[-\w]*$", description="A subject's slug."
    )
    area: str | None = Field(
        None, max_length=100, pattern=r"^[-\w]*$", description="An area's slug."
    )
    q: str | None = Field(
        None, max_length=200, pattern=r"^[^\x00]*$", description="Words in the title or summary."
    )
    page: int = Field(1, ge=1, le=100_000)
    page_size: int = Field(20, ge=1, le=100)


@router.get(
    "/lessons", response={200: LessonPage, 422: Error}, summary="List and search published lessons"
)
def list_lessons(request: HttpRequest, filters: Query[LessonFilters]):
    lessons = Lesson.objects.for_listing()
    if filters.subject:
        lessons = lessons.filter(subject__slug=filters.subject)
    if filters.area:
        lessons = lessons.filter(area__slug=filters.area)
    for word in (filters.q or "").split():
        lessons = lessons.filter(Q(title__icontains=word) | Q(summary__icontains=word))
    count = lessons.count()
    start = (filters.page - 1) * filters.page_size
    page = lessons[start : start + filters.page_size]
    return {
        "count": count,
        "page": filters.page,
        "pages": max(1, -(-count // filters.page_size)),
        "results": [_summary(lesson) for lesson in page],
    }


class SearchFilters(Schema):
    q: str = Field(
        "",
        max_length=lesson_search.MAX_QUERY_CHARS,
        description='Words to find: "quoted phrases", -word to leave a word out, plain words '
        "all required. Common English words are ignored.",
    )
    page: int = Field(
        1, ge=1, le=100_000, description="20 lessons a page; a page past the last is empty."
    )


class SearchHit(LessonSummary):
    subject_name: str
    area_name: str
    snippet: str = Field(
        description="Where the lesson matched, one line of Markdown with the matched words in "
        "**bold**; empty when only the title matched."
    )


class SearchResults(Schema):
    query: str
    count: int = Field(description="How many published lessons match.")
    page: int
    pages: int
    message: str = Field(
        description="Said when there was nothing to search for (no words, only common words) "
        "or only the first words were searched; empty otherwise."
    )
    suggestion: str = Field(
        description='When nothing matched, a "did you mean" spelling to try (PostgreSQL '
        "sites only); empty otherwise."
    )
    results: list[SearchHit]


@router.get(
    "/search",
    response={200: SearchResults, 422: Error},
    summary="Search published lessons by words, best match first",
    description="The site's own search: the title counts most, then the summary, the lesson's "
    "text and its questions. The search page's Markdown twin gives the same as Markdown.",
)
def search_lessons(request: HttpRequest, filters: Query[SearchFilters]):
    query = lesson_search.typed_query(filters.q)  # control characters read as spaces
    found = lesson_search.search(query, page=filters.page, clamp_page=False)
    return {
        "query": found.query,
        "count": found.count,
        "page": found.page,
        "pages": found.pages,
        "message": found.message,
        "suggestion": found.suggestion,
        "results": [
            _summary(hit.lesson)
            | {
                "subject_name": hit.lesson.subject.name,
                "area_name": hit.lesson.area.name,
                "snippet": hit.snippet_markdown if hit.snippet_marked.strip() else "",
            }
            for hit in found.hits
        ],
    }


@router.get(
    "/lessons/{public_id}",
    response={200: LessonDetail, 404: Error},
    summary="A lesson with its text, in Markdown",
)
def get_lesson(request: HttpRequest, public_id: str):
    lesson = _published_lesson(public_id)
    neighbours = list(Lesson.objects.neighbours_of(lesson))

    def links(flag: str) -> list[dict]:
        return [
            {"id": n.public_id, "title": n.title, "url": _url(n.get_absolute_url())}
            for n in neighbours
            if getattr(n, flag)
        ]

    return _summary(lesson) | {
        "objectives": lesson.objective_list,
        "heading": lesson.heading,
        "body": lesson.body,
        "example": lesson.example,
        "tip": lesson.tip,
        "recap": lesson.recap,
        "credits": lesson.credits,
        "question_count": lesson.question_count,
        "flashcard_count": lesson.flashcards.count(),
        "needs_first": links("is_needed_first"),
        "opens_up": links("is_opened_up"),
        "connections": links("is_connection"),
    }


@router.get(
    "/lessons/{public_id}/questions",
    response={200: list[QuestionOut], 404: Error},
    summary="A lesson's questions with choices, answers and explanations",
)
def list_questions(request: HttpRequest, public_id: str):
    lesson = _published_lesson(public_id)
    return [_question_out(question) for question in lesson.questions.all()]


@router.post(
    "/lessons/{public_id}/questions/{number}/check",
    response={200: CheckOut, 400: Error, 404: Error, 422: Error, 429: Error},
    summary="Check an answer; nothing is stored",
)
def check_answer(request: HttpRequest, public_id: str, number: int, body: AnswerIn):
    if wait := retry_after(request, "api_check"):
        raise RateLimited(wait)
    question = _question(_published_lesson(public_id), number)
    grade = _grade_letters_or_ids(question, body.answer)
    out = _question_out(question)
    return {
        "correct": grade.correct,
        "answer": out["answer"],
        "explanation": out["explanation"],
        "choices": [c | {"picked": c["id"] in grade.choice_ids} for c in out["choices"]],
    }
