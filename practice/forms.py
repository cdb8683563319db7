"""Reading answer and rating submissions strictly: anything unexpected is a BadSubmission."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import QueryDict

from lessons.models import Flashcard, Question
from practice import attempts, scheduling
from practice.attempts import Attempt, BadSubmission


@dataclass(frozen=True)
class QuestionAnswer:
    attempt: Attempt
    question: Question
    letters: frozenset[str]


@dataclass(frozen=True)
class FlashcardRating:
    attempt: Attempt
    flashcard: Flashcard
    rating: int


def read_attempt(data: QueryDict, *, lesson_id: int | None = None) -> Attempt:
    attempt = attempts.read(data.get("token"))
    if lesson_id is not None and attempt.lesson_id != lesson_id:
        raise BadSubmission("This answer belongs to a question of another lesson.")
    return attempt


def read_question_answer(data: QueryDict, attempt: Attempt, question: Question) -> QuestionAnswer:
    """The chosen letters, checked against the question's own choices."""
    letters = frozenset(letter.strip().upper() for letter in data.getlist("choice"))
    if not letters:
        raise BadSubmission("No answer was chosen. Pick one of the choices, then submit.")
    known = {choice["letter"] for choice in question.labelled_choices}
    if unknown := sorted(letters - known):
        raise BadSubmission(
            f"{', '.join(repr(u)[:12] for u in unknown)} is not one of this question's choices "
            f"(they are {', '.join(sorted(known))})."
        )
    if len(letters) > 1 and len(question.correct_letters) == 1:
        raise BadSubmission("This question takes one answer, but several were sent.")
    return QuestionAnswer(attempt=attempt, question=question, letters=letters)


def read_flashcard_rating(
    data: QueryDict, attempt: Attempt, flashcard: Flashcard
) -> FlashcardRating:
    raw = data.get("rating", "")
    if not raw:
        raise BadSubmission("No rating was chosen: pick Again, Hard, Good or Easy.")
    try:
        rating = int(raw)
    except ValueError:
        rating = 0
    if rating not in scheduling.RATINGS:
        raise BadSubmission(
            f"{raw[:12]!r} is not a rating: pick 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy)."
        )
    return FlashcardRating(attempt=attempt, flashcard=flashcard, rating=rating)
