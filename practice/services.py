"""Every write a learner causes: answers, self-ratings, rounds, and the learner itself."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.models import Session
from django.db import IntegrityError, transaction

from lessons.models import Flashcard, Lesson, Question
from practice import scheduling
from practice.models import Learner, Memory, Review, Round

SESSION_KEY = "learner"


def learner_get_or_create(*, session: SessionBase, now: datetime) -> Learner:
    """The browser's learner, made at its first answer and remembered in its session."""
    public_id = session.get(SESSION_KEY)
    learner = Learner.objects.filter(public_id=public_id).first() if public_id else None
    if learner is None:
        learner = Learner.objects.create(created_at=now, last_seen_at=now)
        session[SESSION_KEY] = learner.public_id
    elif now - learner.last_seen_at > timedelta(hours=12):
        # Pruning needs only a rough idea of activity; one write a day per learner is plenty.
        Learner.objects.filter(pk=learner.pk).update(last_seen_at=now)
    return learner


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
