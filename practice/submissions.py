"""What a learner submits, read strictly: the signed attempt token every answer form carries,
and the answers and ratings posted with it. Anything unexpected is a BadSubmission.

A token names what the form asks (lesson, item, and the round step or a random nonce) and is
signed, so it cannot be forged or pointed at another item. The same token submitted twice is the
same attempt: it records one review, whatever the timing.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core import signing
from django.http import QueryDict
from django.utils.crypto import salted_hmac

from lessons.models import AnswerNotAccepted, Flashcard, Grade, Question
from practice import scheduling

SALT = "practice.attempt"


class BadSubmission(Exception):
    """A submission that cannot be accepted; the message says why, in the learner's words."""


class BadPaperAnswers(BadSubmission):
    """Typed-in worksheet answers that cannot be marked: what is wrong with each, by question
    position, so the form can say it beside every field at once."""

    def __init__(self, problems: dict[int, str]):
        self.problems = problems
        super().__init__(" ".join(f"Question {n}: {text}" for n, text in problems.items()))


@dataclass(frozen=True)
class Attempt:
    lesson_id: int
    kind: str  # "question", "flashcard" or "worksheet"
    item_id: int
    issued_at: float  # seconds since the epoch
    round_key: str = ""
    round_step: int | None = None
    nonce: str = ""
    # Asked again after the learner was shown the answer: recorded as practice, not scheduled.
    practice: bool = False
    # A new round's first question carries the order the round was shown in (question ids),
    # so the round starts in that order whatever fell due between showing and answering.
    round_order: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """What makes this attempt unique for a learner; it also seeds the order in which the
        question's choices are shown."""
        if self.round_key:
            return round_attempt_key(self.round_key, self.round_step)
        return once_attempt_key(self.nonce)

    @property
    def shown_at(self) -> datetime:
        """When the form was shown (its token was issued)."""
        return datetime.fromtimestamp(self.issued_at, UTC)

    def duration_ms(self) -> int:
        """Time from showing the form to the answer, capped so a forgotten tab does not skew it."""
        return int(min(max(time.time() - self.issued_at, 0), 600) * 1000)


def round_attempt_key(round_key: str, step: int | None) -> str:
    return f"round:{round_key}:{step}"


def once_attempt_key(nonce: str) -> str:
    return f"once:{nonce}"


def new_nonce() -> str:
    """What makes a token issued once unique, and (`once_attempt_key`) seeds its choice order."""
    return secrets.token_urlsafe(12)


# A flashcard set's ratings say in their attempt key where in the set they were made, so that a
# set left part-way can be taken up again from them: a card's showing in the set's run through
# the cards, or its showing once more at the set's end after an Again. Other ratings of a card
# (/review) are not the set's.
SET_SHOWINGS = ("card", "again")


def set_nonce(*, again: bool) -> str:
    return f"{SET_SHOWINGS[again]}-{new_nonce()}"


def set_showing(attempt_key: str) -> str | None:
    """ "card" or "again" for a rating made in a flashcard set (`set_nonce`), else None."""
    kind, _, nonce = attempt_key.partition(":")
    showing = nonce.split("-", 1)[0]
    return showing if kind == "once" and showing in SET_SHOWINGS else None


def issue_for_round(
    *, lesson_id: int, question_id: int, round_key: str, step: int, order: list[int] | None = None
) -> str:
    payload = {"l": lesson_id, "k": "question", "i": question_id, "r": round_key, "s": step}
    return _sign(payload | ({"o": order} if order else {}))


def issue_once(
    *, lesson_id: int, kind: str, item_id: int, practice: bool = False, nonce: str | None = None
) -> str:
    payload = {"l": lesson_id, "k": kind, "i": item_id, "n": nonce or new_nonce()}
    return _sign(payload | ({"p": 1} if practice else {}))


def stable_key(*parts: object) -> str:
    """A key that is the same each time for the same parts, and unguessable without the
    site's secret: a page shown again before it is answered is the same attempt, with its
    choices in the same order."""
    message = ":".join(str(part) for part in parts)
    return salted_hmac("practice.stable-key", message, algorithm="sha256").hexdigest()[:16]


def issue_for_worksheet(*, lesson_id: int) -> str:
    """One token for a whole paper worksheet: its answers count once, however often sent."""
    payload = {"l": lesson_id, "k": "worksheet", "i": 0, "n": new_nonce()}
    return _sign(payload)


def _sign(payload: dict) -> str:
    return signing.dumps(payload | {"t": round(time.time(), 3)}, salt=SALT, compress=False)


def read(token: str | None) -> Attempt:
    if not token:
        raise BadSubmission(
            "The form had no attempt token, so it did not come from this site's page. "
            "Reload the question and answer it again."
        )
    try:
        payload = signing.loads(token, salt=SALT, max_age=settings.ATTEMPT_TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise BadSubmission(
            "This form is too old to accept. Reload the page to get the question again."
        ) from None
    except signing.BadSignature:
        raise BadSubmission(
            "This form was changed or damaged on its way, so the answer was not recorded. "
            "Reload the page and answer again."
        ) from None
    try:
        return Attempt(
            lesson_id=int(payload["l"]),
            kind=str(payload["k"]),
            item_id=int(payload["i"]),
            issued_at=float(payload["t"]),
            round_key=str(payload.get("r", "")),
            round_step=int(payload["s"]) if "s" in payload else None,
            nonce=str(payload.get("n", "")),
            practice=payload.get("p") == 1,
            round_order=tuple(int(pk) for pk in payload.get("o", ())),
        )
    except (KeyError, TypeError, ValueError):
        raise BadSubmission("This form's attempt token is not one this site makes.") from None


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
    attempt = read(data.get("token"))
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
    problems: dict[int, str] = {}
    for question in questions:
        raw = data.get(f"answer_{question.position}", "")
        if not raw.strip():
            continue
        known = ", ".join(choice["letter"] for choice in question.labelled_choices)
        if re.search(r"[^A-Za-z,;\s]", raw):
            problems[question.position] = (
                f"“{raw[:12]}” is not an answer; write the letters of the choices you ticked "
                f"({known})."
            )
            continue
        try:
            answers[question] = question.grade_letters(re.findall(r"[A-Za-z]", raw))
        except AnswerNotAccepted as error:
            problems[question.position] = str(error)
    if problems:
        raise BadPaperAnswers(problems)
    if not answers:
        raise BadSubmission(
            "No answers were typed in: write the letter you ticked for each question."
        )
    return answers
