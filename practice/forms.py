"""Reading answer and rating submissions strictly: anything unexpected is a BadSubmission."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NoReturn

from django.http import QueryDict

from lessons.models import PUBLIC_ID_PATTERN, Flashcard, Question
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
    rating = int(raw) if raw in {"1", "2", "3", "4"} else 0
    if rating not in scheduling.RATINGS:
        raise BadSubmission(
            f"{raw[:12]!r} is not a rating: pick 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy)."
        )
    return FlashcardRating(attempt=attempt, flashcard=flashcard, rating=rating)


# Progress files --------------------------------------------------------------------------------

EXPORT_MAX_BYTES = 5 * 1024 * 1024
ITEM_PATTERN = re.compile(r"^(question|flashcard):[0-9a-f]{1,16}$")
LESSON_PATTERN = re.compile(rf"^{PUBLIC_ID_PATTERN}$")
STATE_NAMES = {name: number for number, name in scheduling.STATES.items()}
CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class ImportedReview:
    rating: int
    reviewed_at: datetime
    duration_ms: int | None
    answer: str
    correct: bool | None


@dataclass(frozen=True)
class ImportedItem:
    lesson: str
    kind: str
    key: str
    memory: scheduling.MemoryState | None
    reviews: list[ImportedReview]


class _Checker:
    """Reads one field after another, failing with the place and the rule that was broken."""

    def __init__(self, where: str, data: object, now: datetime) -> None:
        if not isinstance(data, dict):
            raise BadSubmission(f"{where} must be an object.")
        self.where, self.data, self.now = where, data, now

    def fail(self, name: str, rule: str) -> NoReturn:
        raise BadSubmission(f"{self.where}: “{name}” {rule}.")

    def string(self, name: str, pattern: re.Pattern | None = None, max_length: int = 64) -> str:
        value = self.data.get(name)
        if not isinstance(value, str) or len(value) > max_length:
            self.fail(name, f"must be text of at most {max_length} characters")
        if pattern and not pattern.match(value):
            self.fail(name, "is not in the expected form")
        return value

    def number(self, name: str, low: float, high: float, *, whole: bool = False, optional=False):
        value = self.data.get(name)
        if value is None and optional:
            return None
        kinds = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            self.fail(name, f"must be a {'whole ' if whole else ''}number from {low} to {high}")
        return value

    def moment(self, name: str, *, optional: bool = False, past: bool = True) -> datetime | None:
        value = self.data.get(name)
        if value is None and optional:
            return None
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            self.fail(name, "must be a date and time in ISO 8601 form")
        if moment.tzinfo is None:
            self.fail(name, "must say its time zone (UTC)")
        if not 1970 <= moment.year <= 2200:
            self.fail(name, "is not a date this site could have written")
        if past and moment > self.now + CLOCK_SKEW:
            self.fail(name, "is in the future")
        return scheduling.utc(moment)


def read_export_file(upload, *, now: datetime) -> list[ImportedItem]:
    """A progress file as LightMySky exports it, checked value by value; all else is refused."""
    if upload is None:
        raise BadSubmission("Choose a progress file (.json) to import.")
    if upload.size > EXPORT_MAX_BYTES:
        raise BadSubmission(f"That file is larger than {EXPORT_MAX_BYTES // 1024 // 1024} MB.")
    try:
        document = json.loads(upload.read().decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise BadSubmission(
            "That file is not a LightMySky progress file: it is not JSON."
        ) from None
    return read_export_document(document, now=now)


def read_export_document(document: object, *, now: datetime) -> list[ImportedItem]:
    top = _Checker("The file", document, now)
    version = document.get("version")
    if type(version) is not int or version != 1 or not isinstance(document.get("items"), list):
        raise BadSubmission(
            "That file is not a LightMySky progress file (version 1 with a list of items)."
        )
    top.moment("exported_at")
    items = [_read_item(number, item, now) for number, item in enumerate(document["items"], 1)]
    keys = [(item.lesson, item.kind, item.key) for item in items]
    if len(set(keys)) != len(keys):
        raise BadSubmission("The file names the same item twice.")
    return items


def _read_item(number: int, data: object, now: datetime) -> ImportedItem:
    check = _Checker(f"Item {number}", data, now)
    lesson = check.string("lesson", LESSON_PATTERN)
    item = check.string("item", ITEM_PATTERN)
    kind, key = item.split(":")
    if check.data.get("kind") != kind:
        check.fail("kind", f"must be {kind!r}, as its item says")
    memory = None
    state = check.data.get("state")
    if state is not None:
        if state not in STATE_NAMES:
            check.fail("state", "must be learning, review or relearning")
        memory = scheduling.MemoryState(
            state=STATE_NAMES[state],
            step=check.number("step", 0, 100, whole=True, optional=True),
            stability=check.number("stability", 0.001, 1_000_000),
            difficulty=check.number("difficulty", 1, 10),
            due=check.moment("due", past=False),
            last_review=check.moment("last_review"),
        )
    reviews_data = check.data.get("reviews")
    if not isinstance(reviews_data, list) or len(reviews_data) > 100_000:
        check.fail("reviews", "must be a list")
    reviews = []
    for index, review in enumerate(reviews_data, 1):
        review_check = _Checker(f"Item {number}, review {index}", review, now)
        reviews.append(
            ImportedReview(
                rating=review_check.number("rating", 1, 4, whole=True),
                reviewed_at=review_check.moment("reviewed_at"),
                duration_ms=review_check.number(
                    "duration_ms", 0, 86_400_000, whole=True, optional=True
                ),
                answer=review_check.string("answer", max_length=32),
                correct=_optional_bool(review_check, "correct"),
            )
        )
    return ImportedItem(lesson=lesson, kind=kind, key=key, memory=memory, reviews=reviews)


def _optional_bool(check: _Checker, name: str) -> bool | None:
    value = check.data.get(name)
    if value is not None and not isinstance(value, bool):
        check.fail(name, "must be true, false or null")
    return value


# Answers typed in from a printed worksheet ---------------------------------------------------


def read_paper_answers(
    data: QueryDict, *, questions: list[Question], expected_code: str
) -> dict[Question, frozenset[str]]:
    """The letters written on paper for each question; blank questions are left out."""
    code = re.sub(r"[^A-Za-z0-9]", "", data.get("code", "")).upper()
    if not code:
        raise BadSubmission("Type the worksheet code printed at the top of your worksheet.")
    if code != expected_code:
        raise BadSubmission(
            f"The code {code[:12]} is not this worksheet's. Check it against the top of the "
            "page; a worksheet printed before the questions changed cannot be typed in."
        )
    answers: dict[Question, frozenset[str]] = {}
    for question in questions:
        raw = data.get(f"answer_{question.position}", "")
        letters = frozenset(re.findall(r"[A-Za-z]", raw.upper()))
        if not raw.strip():
            continue
        known = {choice["letter"] for choice in question.labelled_choices}
        if not letters or not letters <= known or re.search(r"[^A-Za-z,;\s]", raw):
            raise BadSubmission(
                f"Question {question.position}: “{raw[:12]}” is not an answer; write the letters "
                f"of the choices you ticked ({', '.join(sorted(known))})."
            )
        if len(letters) > 1 and len(question.correct_letters) == 1:
            raise BadSubmission(
                f"Question {question.position} takes one answer, but several were written."
            )
        answers[question] = letters
    if not answers:
        raise BadSubmission(
            "No answers were typed in: write the letter you ticked for each question."
        )
    return answers
