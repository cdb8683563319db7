"""Every write a learner causes: answers, self-ratings, rounds, and the learner itself."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.models import Session
from django.db import IntegrityError, transaction

from lessons.models import Flashcard, Lesson, Question
from practice import scheduling, selectors
from practice.forms import ImportedItem, ImportedReview, read_export_document
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SEEN_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    Memory,
    Review,
    Round,
    TransferCode,
)


def learner_get_or_create(
    *, session: SessionBase, browser_secret: str | None, now: datetime
) -> Learner:
    """The browser's learner, made at its first answer and remembered in its session.

    `browser_secret` is the browser's CSRF cookie: identical first answers racing each other
    before any session exists share one learner through its hash (a unique column).
    """
    public_id, pk = session.get(LEARNER_SESSION_KEY), session.get(LEARNER_PK_SESSION_KEY)
    if public_id and pk:
        # The session names the learner: no query. If the row is gone after all, the write
        # fails on its foreign key and raises LearnerGone (see _review_record).
        learner = Learner(pk=pk, public_id=public_id)
        seen = session.get(LEARNER_SEEN_SESSION_KEY, "")
        if seen < (now - timedelta(hours=12)).isoformat():
            # Pruning needs only a rough idea of activity; one write a day is plenty. Saving
            # the session moves its expiry on, so an active learner's cookie never lapses.
            Learner.objects.filter(pk=pk).update(last_seen_at=now)
            session[LEARNER_SEEN_SESSION_KEY] = now.isoformat()
        return learner
    learner = Learner.objects.filter(public_id=public_id).first() if public_id else None
    if learner is None:
        browser_hash = (
            hashlib.sha256(f"learner-browser:{browser_secret}".encode()).hexdigest()
            if browser_secret
            else None
        )
        try:
            with transaction.atomic():
                learner = Learner.objects.create(
                    created_at=now, last_seen_at=now, browser_hash=browser_hash
                )
        except IntegrityError:
            learner = Learner.objects.get(browser_hash=browser_hash)
    elif now - learner.last_seen_at > timedelta(hours=12):
        Learner.objects.filter(pk=learner.pk).update(last_seen_at=now)
    learner_bind_session(session=session, learner=learner, now=now)
    return learner


def learner_bind_session(*, session: SessionBase, learner: Learner, now: datetime) -> None:
    """Remember in the browser's session which learner it is."""
    session[LEARNER_SESSION_KEY] = learner.public_id
    session[LEARNER_PK_SESSION_KEY] = learner.pk
    session[LEARNER_SEEN_SESSION_KEY] = now.isoformat()


class LearnerGone(Exception):
    """The session named a learner that no longer exists (pruned while the cookie lived on)."""


def forget_learner_in_session(session: SessionBase) -> None:
    for key in (LEARNER_SESSION_KEY, LEARNER_PK_SESSION_KEY, LEARNER_SEEN_SESSION_KEY):
        session.pop(key, None)


def round_start(*, learner: Learner, lesson: Lesson, key: str, now: datetime) -> Round:
    """The round with this key, created if it is new (safe when two requests race)."""
    round_, _ = Round.objects.get_or_create(
        learner=learner, key=key, defaults={"lesson": lesson, "started_at": now}
    )
    return round_


def question_answer(
    *,
    learner: Learner,
    question: Question,
    answer: frozenset[str],
    attempt: str,
    duration_ms: int | None,
    now: datetime,
    round_: Round | None = None,
    round_step: int | None = None,
    finishes_round: bool = False,
) -> tuple[Review, bool]:
    """Grade an answer (a set of choice letters), schedule the question and log the review."""
    correct = answer == frozenset(question.correct_letters)
    return _review_record(
        learner=learner,
        lesson_id=question.lesson_id,
        question=question,
        rating=scheduling.rating_for_answer(correct),
        correct=correct,
        answer=",".join(sorted(answer)),
        attempt=attempt,
        duration_ms=duration_ms,
        now=now,
        round_=round_,
        round_step=round_step,
        finishes_round=finishes_round,
    )


def flashcard_rate(
    *,
    learner: Learner,
    flashcard: Flashcard,
    rating: int,
    attempt: str,
    duration_ms: int | None,
    now: datetime,
) -> tuple[Review, bool]:
    """Schedule a flashcard by the learner's own rating (Again, Hard, Good or Easy)."""
    return _review_record(
        learner=learner,
        lesson_id=flashcard.lesson_id,
        flashcard=flashcard,
        rating=rating,
        correct=None,
        answer=scheduling.RATINGS[rating],
        attempt=attempt,
        duration_ms=duration_ms,
        now=now,
    )


def _review_record(*, learner: Learner, attempt: str, **fields: Any) -> tuple[Review, bool]:
    """Log a review and move the memory state on, once per attempt even under concurrent retries.

    Returns the review and whether it is new. The unique (learner, attempt) constraint decides
    which of two identical submissions wins; the loser's transaction rolls back whole and it
    returns the winner's review. A concurrent first review of the same item by another attempt
    can win the race to create its memory row; a second try then finds and locks that row.
    """
    for try_number in (1, 2):
        try:
            return _review_write(learner=learner, attempt=attempt, **fields), True
        except IntegrityError:
            existing = Review.objects.filter(learner=learner, attempt=attempt).first()
            if existing is not None:
                return existing, False
            if not Learner.objects.filter(pk=learner.pk).exists():
                raise LearnerGone from None
            if try_number == 2:
                raise
    raise AssertionError("unreachable")


@transaction.atomic
def _review_write(
    *,
    learner: Learner,
    lesson_id: int,
    rating: int,
    correct: bool | None,
    answer: str,
    attempt: str,
    duration_ms: int | None,
    now: datetime,
    question: Question | None = None,
    flashcard: Flashcard | None = None,
    round_: Round | None = None,
    round_step: int | None = None,
    finishes_round: bool = False,
) -> Review:
    memory = (
        Memory.objects.select_for_update()
        .filter(learner=learner, question=question, flashcard=flashcard)
        .first()
    )
    new_state = scheduling.review(memory.memory_state if memory else None, rating, now)
    review = Review.objects.create(
        learner=learner,
        lesson_id=lesson_id,
        question=question,
        flashcard=flashcard,
        round=round_,
        round_step=round_step,
        attempt=attempt,
        rating=rating,
        reviewed_at=now,
        duration_ms=duration_ms,
        answer=answer,
        correct=correct,
    )
    if memory is None:
        memory = Memory(
            learner=learner, lesson_id=lesson_id, question=question, flashcard=flashcard
        )
    memory.set_memory_state(new_state, rating)
    memory.save()
    if round_ is not None and finishes_round:
        Round.objects.filter(pk=round_.pk).update(finished_at=now)
    return review


def learners_prune(*, idle_since: datetime, now: datetime) -> int:
    """Remove learners idle since a moment, with everything stored for them; and dead sessions."""
    Session.objects.filter(expire_date__lt=now).delete()
    idle = Learner.objects.filter(last_seen_at__lt=idle_since)
    count = idle.count()
    idle.delete()
    return count


# Progress that belongs to the browser ---------------------------------------------------------


@dataclass
class ImportResult:
    items: int = 0
    reviews_added: int = 0
    states_taken: int = 0
    skipped: int = 0


@transaction.atomic
def progress_import(*, learner: Learner, items: list[ImportedItem]) -> ImportResult:
    """Merge items into a learner's progress: the union of review logs, the newer memory state.

    Items that no longer exist on this site are skipped. Importing the same file twice changes
    nothing the second time.
    """
    result = ImportResult()
    targets = _import_targets(items)
    existing_memories = {
        (m.question_id, m.flashcard_id): m for m in Memory.objects.filter(learner=learner)
    }
    known_attempts = set(
        Review.objects.filter(learner=learner, attempt__startswith="import:").values_list(
            "attempt", flat=True
        )
    )
    own_reviews = set(
        Review.objects.filter(learner=learner).values_list(
            "question_id", "flashcard_id", "reviewed_at", "rating"
        )
    )
    new_reviews = []
    for item in items:
        target = targets.get((item.lesson, item.kind, item.key))
        if target is None:
            result.skipped += 1
            continue
        result.items += 1
        item_fields = {
            "lesson_id": target.lesson_id,
            "question": target if item.kind == "question" else None,
            "flashcard": target if item.kind == "flashcard" else None,
        }
        ids = (target.pk, None) if item.kind == "question" else (None, target.pk)
        for review in item.reviews:
            attempt = _import_attempt(item, review)
            if (
                attempt in known_attempts
                or (*ids, review.reviewed_at, review.rating) in own_reviews
            ):
                continue
            known_attempts.add(attempt)
            new_reviews.append(
                Review(learner=learner, attempt=attempt, **item_fields, **vars(review))
            )
        memory = existing_memories.get(ids)
        if item.memory and (
            memory is None
            or memory.last_review is None
            or item.memory.last_review > memory.last_review
        ):
            latest = max(item.reviews, key=lambda r: r.reviewed_at, default=None)
            memory = memory or Memory(learner=learner, **item_fields)
            memory.set_memory_state(item.memory, latest.rating if latest else scheduling.GOOD)
            memory.save()
            result.states_taken += 1
    Review.objects.bulk_create(new_reviews)
    result.reviews_added = len(new_reviews)
    return result


def _import_targets(items: list[ImportedItem]) -> dict[tuple[str, str, str], Question | Flashcard]:
    """The questions and flashcards that the file's items name, in two queries."""
    lessons = {item.lesson for item in items}
    targets: dict[tuple[str, str, str], Question | Flashcard] = {}
    for kind, model in (("question", Question), ("flashcard", Flashcard)):
        keys = {item.key for item in items if item.kind == kind}
        rows = model.objects.filter(lesson__public_id__in=lessons, key__in=keys).select_related(
            "lesson"
        )
        for row in rows:
            targets[(row.lesson.public_id, kind, row.key)] = row
    return targets


def _import_attempt(item: ImportedItem, review: ImportedReview) -> str:
    """A stable identity for an imported review, so a second import adds nothing."""
    identity = (
        f"{item.lesson}|{item.kind}:{item.key}|{review.reviewed_at.isoformat()}|{review.rating}"
    )
    return "import:" + hashlib.sha256(identity.encode()).hexdigest()[:48]


def learner_forget(*, learner: Learner | None, session: SessionBase) -> None:
    """Erase the learner with everything stored for it, and end the browser's session."""
    if learner is not None:
        learner.delete()
    session.flush()


TRANSFER_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L to misread
TRANSFER_CODE_LENGTH = 8
TRANSFER_CODE_LIFETIME = timedelta(hours=24)


def normalise_transfer_code(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def _transfer_code_hash(code: str) -> str:
    return hashlib.sha256(
        f"lightmysky-transfer:{normalise_transfer_code(code)}".encode()
    ).hexdigest()


def transfer_code_create(*, learner: Learner, now: datetime) -> str:
    """A new one-time code for this learner, valid for 24 hours; older unused codes stop working."""
    code = "".join(secrets.choice(TRANSFER_ALPHABET) for _ in range(TRANSFER_CODE_LENGTH))
    with transaction.atomic():
        TransferCode.objects.filter(learner=learner, used_at__isnull=True).delete()
        TransferCode.objects.create(
            learner=learner,
            code_hash=_transfer_code_hash(code),
            created_at=now,
            expires_at=now + TRANSFER_CODE_LIFETIME,
        )
    return f"{code[:4]}-{code[4:]}"


class TransferCodeInvalid(Exception):
    pass


@transaction.atomic
def transfer_code_redeem(*, code: str, current: Learner | None, now: datetime) -> Learner:
    """Adopt the progress behind a code in this browser; this browser's own progress joins it."""
    transfer = (
        TransferCode.objects.select_for_update()
        .select_related("learner")
        .filter(code_hash=_transfer_code_hash(code), used_at__isnull=True, expires_at__gt=now)
        .first()
    )
    if transfer is None:
        raise TransferCodeInvalid(
            "That code does not work: it may be mistyped, already used, or older than 24 hours."
        )
    transfer.used_at = now
    transfer.save(update_fields=["used_at"])
    target = transfer.learner
    if current is not None and current.pk != target.pk:
        document = selectors.export_document(learner=current, now=now)
        progress_import(learner=target, items=read_export_document(document, now=now))
        current.delete()
    Learner.objects.filter(pk=target.pk).update(last_seen_at=now)
    return target


def question_memories_reset(*, question: Question) -> int:
    """Forget every learner's memory of a question whose right answer changed; logs stay."""
    deleted, _ = Memory.objects.filter(question=question).delete()
    return deleted
