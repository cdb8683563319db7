"""Plain functions that make content for tests; each takes overrides as keyword arguments."""

from __future__ import annotations

from typing import Any

from lessons import search
from lessons.models import Area, Flashcard, Lesson, Question, Subject


def make_subject(**overrides: Any) -> Subject:
    values = {"name": "Computing", "slug": "computing"} | overrides
    return Subject.objects.get_or_create(slug=values["slug"], defaults=values)[0]


def make_area(subject: Subject | None = None, **overrides: Any) -> Area:
    subject = subject or make_subject()
    values = {"name": "Machine Learning", "slug": "machine-learning"} | overrides
    return Area.objects.get_or_create(subject=subject, slug=values["slug"], defaults=values)[0]


@search.refreshed_once()  # as a lesson file loads: indexed once, not once a question
def make_lesson(*, questions: int = 8, flashcards: int = 4, **overrides: Any) -> Lesson:
    area = overrides.pop("area", None) or make_area(overrides.get("subject"))
    values: dict[str, Any] = {
        "title": "Counting Stars",
        "slug": "counting-stars",
        "summary": "How to count what you can see.",
        "subject": area.subject,
        "area": area,
        "age_from": 10,
        "age_to": 12,
        "objectives": "Count the stars\nName a constellation",
        "heading": "Look up",
        "body": "Stars are **bright**.",
        "example": "| Night | Stars |\n| --- | --- |\n| 1 | 12 |",
        "tip": "Let your eyes adjust.",
        "recap": "Count slowly.",
        "status": Lesson.Status.PUBLISHED,
    } | overrides
    lesson = Lesson.objects.create(**values)
    for position in range(1, questions + 1):
        make_question(lesson, position=position)
    for position in range(1, flashcards + 1):
        Flashcard.objects.create(
            lesson=lesson, position=position, front=f"Front {position}", back=f"Back {position}"
        )
    return lesson


def make_question(lesson: Lesson, **overrides: Any) -> Question:
    position = overrides.get("position", 1)
    values: dict[str, Any] = {
        "position": position,
        "prompt": f"Question number {position}?",
        "choices": [
            {"text": "The right one", "correct": True, "explanation": ""},
            {"text": "A wrong one", "correct": False, "explanation": "Because it is wrong."},
            {"text": "Another wrong one", "correct": False, "explanation": "It is not the one."},
        ],
        "explanation": "The right one is *right*.",
    } | overrides
    return Question.objects.create(lesson=lesson, **values)
