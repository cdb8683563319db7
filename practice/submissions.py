"""Reading answer and rating submissions strictly: anything unexpected is a BadSubmission."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.http import QueryDict

from lessons.models import AnswerNotAccepted, Flashcard, Grade, Question
from practice import attempts, scheduling
from practice.attempts import Attempt, BadSubmission


@dataclass(frozen=True)
class QuestionAnswer:
    attempt: Attempt
    question: Question
    grade: Grade
    guessed: bool = False


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
    """The chosen choices (by identity), graded by the question's own rule."""
    try:
        grade = question.grade(data.getlist("choice"))
    except AnswerNotAccepted as error:
        raise BadSubmission(str(error)) from None
    guessed = data.get("guessed") == "yes"
    return QuestionAnswer(attempt=attempt, question=question, grade=grade, guessed=guessed)


def read_flashcard_rating(
    data: QueryDict, attempt: Attempt, flashcard: Flashcard
) -> FlashcardRating:
    raw = data.get("rating", "")
    if not raw:
        raise BadSubmission("No rating was chosen: pick Again, Hard, Good or Easy.")
    rating = int(raw) if raw in {"1", "2", "3", "4"} else 0
    if rating not in scheduling.RATINGS:
        raise BadSubmission(
            f"{raw[:12]!r} is not a rating: pick 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy)."
        )
    return FlashcardRating(attempt=attempt, flashcard=flashcard, rating=rating)


# Answers typed in from a printed worksheet ---------------------------------------------------


def read_paper_answers(
    data: QueryDict, *, questions: list[Question], expected_code: str
) -> dict[Question, Grade]:
    """The letters written on paper for each question; blank questions are left out."""
    code = re.sub(r"[^A-Za-z0-9]", "", data.get("code", "")).upper()
    if not code:
        raise BadSubmission("Type the worksheet code printed at the top of your worksheet.")
    if code != expected_code:
        raise BadSubmission(
            f"The code {code[:12]} is not this worksheet's. Check it against the top of the "
            "page; a worksheet printed before the questions changed cannot be typed in."
        )
    answers: dict[Question, Grade] = {}
    for question in questions:
        raw = data.get(f"answer_{question.position}", "")
        if not raw.strip():
            continue
        known = ", ".join(choice["letter"] for choice in question.labelled_choices)
        if re.search(r"[^A-Za-z,;\s]", raw):
            raise BadSubmission(
                f"Question {question.position}: “{raw[:12]}” is not an answer; write the letters "
                f"of the choices you ticked ({known})."
            )
        try:
            answers[question] = question.grade_letters(re.findall(r"[A-Za-z]", raw))
        except AnswerNotAccepted as error:
            raise BadSubmission(f"Question {question.position}: {error}") from None
    if not answers:
        raise BadSubmission(
            "No answers were typed in: write the letter you ticked for each question."
        )
    return answers
