"""Every write a learner causes: answers, self-ratings, rounds, and the learner itself."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypedDict

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.models import Session
from django.db import IntegrityError, transaction
from django.utils.crypto import salted_hmac

from lessons.models import Flashcard, Grade, Lesson, Question
from practice import progress_file, scheduling, selectors, sky
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SEEN_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    LearnerGone,
    Memory,
    Review,
    Round,
    RoundProgress,
    SessionEnded,
    TransferCode,
)
from practice.submissions import Attempt, BadSubmission, FlashcardRating, QuestionAnswer


def learner_get_or_create(
    *,
    session: SessionBase,
    browser_secret: str | None,
    now: datetime,
    session_named: str | None = None,
) -> Learner:
    """The browser's learner, made at its first answer and remembered in its session.

    `browser_secret` is the browser's CSRF cookie and address: identical first answers racing
    each other before any session exists share one learner through its hash (a unique column).
    `session_named` is the session key the browser's cookie sent: if that session was deleted
    (by "Forget everything", while this request was on its way) the browser gets no new learner
    (SessionEnded). An expired session is still stored, and its browser simply starts afresh.
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
    if session_named and session.session_key is None and not session.exists(session_named):
        raise SessionEnded
    found = Learner.objects.filter(public_id=public_id).first() if public_id else None
    if found is None:
        browser_hash = (
            hashlib.sha256(f"learner-browser:{browser_secret}".encode()).hexdigest()
            if browser_secret
            else None
        )
        learner = _learner_create(browser_hash=browser_hash, now=now)
    else:
        learner = found
        if now - learner.last_seen_at > timedelta(hours=12):
            Learner.objects.filter(pk=learner.pk).update(last_seen_at=now)
    learner_bind_session(session=session, learner=learner, now=now)
    return learner


# How long a browser's first answers may race each other to make its learner: within this, a
# second learner with the browser's hash is the first one's twin, and becomes the same learner.
FIRST_ANSWERS_RACE = timedelta(minutes=1)


def _learner_create(*, browser_hash: str | None, now: datetime) -> Learner:
    """A new learner for a browser without one in its session. A learner that already holds the
    browser's hash was made by the same browser: a moment ago, by a first answer sent at once
    (it is that learner), or before its session ended (it keeps its progress, and lets go of
    the hash: an ended session does not lead back to it)."""
    for _ in range(2):
        try:
            with transaction.atomic():
                return Learner.objects.create(
                    created_at=now, last_seen_at=now, browser_hash=browser_hash
                )
        except IntegrityError:
            holder = Learner.objects.filter(browser_hash=browser_hash).first()
            if holder is not None and holder.created_at >= now - FIRST_ANSWERS_RACE:
                return holder
            Learner.objects.filter(browser_hash=browser_hash).update(browser_hash=None)
    raise AssertionError("unreachable: the browser's hash was let go")


def learner_bind_session(*, session: SessionBase, learner: Learner, now: datetime) -> None:
    """Remember in the browser's session which learner it is."""
    session[LEARNER_SESSION_KEY] = learner.public_id
    session[LEARNER_PK_SESSION_KEY] = learner.pk
    session[LEARNER_SEEN_SESSION_KEY] = now.isoformat()


def learner_session_clear(session: SessionBase) -> None:
    for key in (LEARNER_SESSION_KEY, LEARNER_PK_SESSION_KEY, LEARNER_SEEN_SESSION_KEY):
        session.pop(key, None)


class NewRound(NamedTuple):
    """A round to start with its first answer, in the answer's transaction."""

    key: str
    order: list[int]


STALE_ROUND_ANSWER = (
    "This question was already answered in this round, or is not the one being asked now, "
    "so this answer was not recorded. Carry on from where you are."
)

LEFT_ROUND_ANSWER = (
    "This round was left unfinished over a day ago, so this answer was not recorded. "
    "Its questions start again in a new round."
)


def round_answer(
    *,
    learner: Learner,
    lesson: Lesson,
    questions: list[Question],
    answer: QuestionAnswer,
    now: datetime,
    preview: bool = False,
) -> tuple[Review, RoundProgress, bool]:
    """Answer the current question of a practice round: load the round, refuse an answer to
    a step that is not the current one, record it, and finish the round after its last answer.

    The same form sent twice returns the review the first one recorded, and False for
    `created`.
    """
    attempt, question = answer.attempt, answer.question
    progress = RoundProgress.load(
        learner=learner, lesson=lesson, questions=questions, key=attempt.round_key
    )
    review = next((r for r in progress.reviews if r.attempt == attempt.key), None)
    if review is not None:
        return review, progress, False
    if progress.left(now):  # a form from an old tab: the practice page has begun a new round
        raise BadSubmission(LEFT_ROUND_ANSWER)
    if progress.round is None:  # the round's first answer: it asks in the order it was shown
        by_pk = {q.pk: q for q in questions}
        if sorted(attempt.round_order) == sorted(by_pk):
            progress.questions = [by_pk[pk] for pk in attempt.round_order]
        else:  # a form from before orders were carried, or the lesson changed since
            memories = selectors.lesson_memories(learner=learner, lesson=lesson)
            progress.questions = selectors.new_round_questions(
                questions=questions, memories=memories, now=attempt.shown_at
            )
    if attempt.round_step != progress.step or progress.current != question:
        raise BadSubmission(STALE_ROUND_ANSWER)
    review, created = question_answer(
        learner=learner,
        question=question,
        grade=answer.grade,
        attempt=attempt.key,
        duration_ms=attempt.duration_ms(),
        now=now,
        round_=progress.round,
        new_round=None
        if progress.round
        else NewRound(attempt.round_key, [q.pk for q in progress.questions]),
        round_step=progress.step,
        finishes_round=progress.finished_after(answer.grade.correct),
        guessed=answer.guessed,
        # The second pass asks again what was missed after the right answer was shown.
        practice=progress.step >= len(progress.questions),
        preview=preview,
    )
    if created:
        progress.round = progress.round or review.round
        progress.reviews.append(review)
    return review, progress, created


class _ReviewFields(TypedDict):
    learner: Learner
    attempt: str
    duration_ms: int | None
    now: datetime
    shown_at: datetime | None
    practice: bool
    preview: bool


def review_answer(
    *,
    learner: Learner,
    attempt: Attempt,
    answer: QuestionAnswer | FlashcardRating,
    now: datetime,
    preview: bool = False,
) -> tuple[Review, bool]:
    """Answer a question or rate a flashcard shown on its own (the review queue, the flashcards
    page): one review per item shown, practice logged but not scheduled."""
    common: _ReviewFields = {
        "learner": learner,
        "attempt": attempt.key,
        "duration_ms": attempt.duration_ms(),
        "now": now,
        "shown_at": attempt.shown_at,
        "practice": attempt.practice,
        "preview": preview,
    }
    if isinstance(answer, QuestionAnswer):
        return question_answer(
            question=answer.question, grade=answer.grade, guessed=answer.guessed, **common
        )
    return flashcard_rate(flashcard=answer.flashcard, rating=answer.rating, **common)


def question_answer(
    *,
    learner: Learner,
    question: Question,
    grade: Grade,
    attempt: str,
    duration_ms: int | None,
    now: datetime,
    round_: Round | None = None,
    new_round: NewRound | None = None,
    round_step: int | None = None,
    finishes_round: bool = False,
    shown_at: datetime | None = None,
    guessed: bool = False,
    practice: bool = False,
    preview: bool = False,
) -> tuple[Review, bool]:
    """Schedule a graded answer (Question.grade) and log the review.

    A `practice` answer (given after the right one was shown) is logged but not scheduled. A
    `preview` (staff, or a draft) is logged and scheduled, with the origin that keeps it out
    of the editors' analytics.

    `shown_at`, when the form was shown outside a round: if the learner has reviewed the item
    since (in another tab, or before a reload), this answer is the same sitting's and records
    nothing; the earlier review is returned.
    """
    return _review_record(
        learner=learner,
        lesson_id=question.lesson_id,
        question=question,
        rating=scheduling.rating_for_answer(grade.correct, guessed=guessed),
        correct=grade.correct,
        practice=practice,
        answer=grade.answer,
        attempt=attempt,
        duration_ms=duration_ms,
        now=now,
        round_=round_,
        new_round=new_round,
        round_step=round_step,
        finishes_round=finishes_round,
        shown_at=shown_at,
        preview=preview,
    )


def flashcard_rate(
    *,
    learner: Learner,
    flashcard: Flashcard,
    rating: int,
    attempt: str,
    duration_ms: int | None,
    now: datetime,
    shown_at: datetime | None = None,
    practice: bool = False,
    preview: bool = False,
) -> tuple[Review, bool]:
    """Schedule a flashcard by the learner's own rating (Again, Hard, Good or Easy); one rating
    per card shown, and practice logged but not scheduled, as for `question_answer`."""
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
        shown_at=shown_at,
        practice=practice,
        preview=preview,
    )


def _review_record(*, learner: Learner, attempt: str, **fields: Any) -> tuple[Review, bool]:
    """Log a review and move the memory state on, once per attempt even under concurrent retries.

    Returns the review and whether it is new. The unique (learner, attempt) constraint decides
    which of two identical submissions wins; the loser's writes roll back whole and it returns
    the winner's review. A concurrent first review of the same item by another attempt can win
    the race to create its memory row; a second try then finds that row.
    """
    for try_number in (1, 2):
        try:
            return _review_write(learner=learner, attempt=attempt, **fields)
        except IntegrityError:
            existing = Review.objects.filter(learner=learner, attempt=attempt).first()
            if existing is not None:
                return existing, False
            if not Learner.objects.filter(pk=learner.pk).exists():
                raise LearnerGone from None
            if try_number == 2:
                raise
    raise AssertionError("unreachable")


class _Writes(NamedTuple):
    """What one answer writes: its round when it starts one, its review, and the memory it
    moves on (none for practice), and whether it finishes a round already stored."""

    round_: Round | None
    review: Review
    memory: Memory | None
    finishes_round: bool


@transaction.atomic
def _review_write(**fields: Any) -> tuple[Review, bool]:
    """Write one answer in one transaction, the same on both databases: the learner and the
    item's memory are locked (on SQLite the IMMEDIATE transaction holds the whole database),
    then the round, the review and the memory are saved. Its commit waits for the disk."""
    learner = fields["learner"]
    # The learner first, then the memory: "Forget everything" locks the learner before it deletes
    # the memories, so an answer that held a memory first would deadlock with it.
    if not Learner.objects.select_for_update(no_key=True).filter(pk=learner.pk).exists():
        raise LearnerGone
    item = {kind: fields.get(kind) for kind in ("question", "flashcard") if fields.get(kind)}
    memory = (
        Memory.objects.select_for_update()
        .filter(learner=learner, **item)
        .with_answer_seen_since(fields["now"] - sky.SITTING)
        .first()
    )
    writes = _writes_for(memory, **fields)
    if isinstance(writes, Review):
        return writes, False
    round_, review = writes.round_, writes.review
    if round_ is not None and round_.pk is None:
        round_.save()
    review.save()
    if writes.memory is not None:
        writes.memory.save()
    if round_ is not None and writes.finishes_round:
        round_.finished_at = review.reviewed_at
        round_.save(update_fields=["finished_at"])
    return review, True


def _writes_for(
    memory: Memory | None,
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
    new_round: NewRound | None = None,
    round_step: int | None = None,
    finishes_round: bool = False,
    shown_at: datetime | None = None,
    practice: bool = False,
    preview: bool = False,
) -> _Writes | Review:
    """What an answer writes, given the item's memory as it stands; or, if the item was
    reviewed since the form was shown (`shown_at`), that earlier review, and nothing to write."""
    # Answered since it was shown? A practice answer leaves last_review as it was.
    if (
        memory is not None
        and shown_at
        and any(at and at >= shown_at for at in (memory.last_review, memory.answer_seen_at))
    ):
        earlier = (
            Review.objects.filter(
                learner=learner, question=question, flashcard=flashcard, reviewed_at__gte=shown_at
            )
            .order_by("reviewed_at", "pk")
            .first()
        )
        if earlier is not None:
            return earlier
    # Every verdict shows the right answer: answering the item again within the sitting
    # (sky.SITTING) repeats what was on screen, and is practice.
    practice = practice or (memory is not None and memory.answer_seen_at is not None)
    if round_ is None and new_round is not None:
        # Started by its first answer, with it: a round never exists without one. Two requests
        # racing with that answer collide on (learner, key) and on the attempt alike; the
        # loser returns the winner's review (_review_record).
        round_ = Round(
            learner=learner,
            key=new_round.key,
            lesson_id=lesson_id,
            started_at=now,
            finished_at=now if finishes_round else None,
            question_order=new_round.order,
        )
        finishes_round = False
    outcome = sky.outcome_of(rating, correct)
    review = Review(
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
        answer_kind=Review.Kind.LATER if practice else _answer_kind(memory, outcome),
        practice=practice,
        origin=Review.Origin.PREVIEW if preview else Review.Origin.ANSWERED,
    )
    if practice:
        return _Writes(round_, review, None, finishes_round and round_ is not None)
    new_state = scheduling.review(memory.memory_state if memory else None, rating, now)
    if memory is None:
        memory = Memory(
            learner=learner, lesson_id=lesson_id, question=question, flashcard=flashcard
        )
    guess_rate = (
        sky.guess_rate(len(question.choices), several=question.takes_several)
        if question is not None
        else sky.FLASHCARD_GUESS_RATE
    )
    level_before = memory.evidence
    memory.record_evidence(outcome, guess_rate=guess_rate, now=now)
    memory.set_memory_state(new_state, rating)
    review.star_change = sky.star_change(level_before, memory.evidence)
    review.answers_to_light = sky.answers_to_light(memory.evidence_now, guess_rate)
    review.lights_from = sky.lights_from(memory.evidence_now)
    # /review holds an item back for a sitting after its answer was shown (first_due).
    review.comes_back_at = max(memory.due, now + sky.SITTING)
    return _Writes(round_, review, memory, finishes_round and round_ is not None)


def _answer_kind(memory: Memory | None, outcome: sky.Outcome) -> str:
    if memory is None:
        return Review.Kind.FIRST
    if outcome == sky.Outcome.WRONG and not memory.missed:
        return Review.Kind.LAPSE
    return Review.Kind.LATER


def learners_prune(*, idle_since: datetime, now: datetime) -> int:
    """Remove learners idle since a moment, with everything stored for them; and dead sessions."""
    Session.objects.filter(expire_date__lt=now).delete()
    idle = Learner.objects.filter(last_seen_at__lt=idle_since)
    count = idle.count()
    idle.delete()
    progress_file.trim_oldest_reviews()
    return count


# Progress that belongs to the browser ---------------------------------------------------------


def learner_forget(*, learner: Learner | None, session: SessionBase) -> bool:
    """Erase the learner with everything stored for it, and end the browser's session; whether
    another browser shared the learner (one of its transfer codes was used), and lost it too.

    The learner's row is locked first: a request of the same browser that is writing for it
    (an answer, a transfer code) either finishes before the erasing starts, and is erased with
    the rest, or waits and then finds the learner gone. The session ends in the same
    transaction, so a request that finds the learner gone also finds its session gone, and
    does not start a new learner for a browser that asked to be forgotten; nor does one that
    reads the session only after it ended (`learner_get_or_create` raises SessionEnded).
    """
    shared = False
    with transaction.atomic():
        if learner is not None:
            locked = Learner.objects.select_for_update().filter(pk=learner.pk).first()
            if locked is not None:
                shared = locked.transfer_codes.filter(used_at__isnull=False).exists()
                locked.delete()
        session.flush()
    return shared


TRANSFER_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L to misread
TRANSFER_CODE_LENGTH = 8
TRANSFER_CODE_LIFETIME = timedelta(hours=24)


def normalise_transfer_code(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def _transfer_code_hashes(code: str) -> list[str]:
    """Keyed with SECRET_KEY: without the key, a copy of the table cannot be searched for codes
    (there are only 31^8 of them, a few GPU-minutes of plain hashing). Then keyed with each of
    SECRET_KEY_FALLBACKS: a code made before a key rotation works while its key is a fallback."""
    return [
        salted_hmac(
            "lightmysky.transfer-code",
            normalise_transfer_code(code),
            secret=key,
            algorithm="sha256",
        ).hexdigest()
        for key in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    ]


def transfer_code_create(*, learner: Learner, now: datetime) -> str:
    """A new one-time code for this learner, valid for 24 hours; older unused codes stop working."""
    code = "".join(secrets.choice(TRANSFER_ALPHABET) for _ in range(TRANSFER_CODE_LENGTH))
    with transaction.atomic():
        TransferCode.objects.filter(learner=learner, used_at__isnull=True).delete()
        TransferCode.objects.create(
            learner=learner,
            code_hash=_transfer_code_hashes(code)[0],
            created_at=now,
            expires_at=now + TRANSFER_CODE_LIFETIME,
        )
    return f"{code[:4]}-{code[4:]}"


class TransferCodeInvalid(Exception):
    pass


CODE_DOES_NOT_WORK = (
    "That code does not work: it may be mistyped, already used, replaced by a newer code, or "
    "older than 24 hours."
)


def transfer_code_holder(*, code: str, now: datetime) -> tuple[int | None, bool]:
    """The learner whose progress a code brings, and whether it can be used now (nothing
    changes: a scanned code is checked before the question is asked)."""
    found = (
        TransferCode.objects.filter(code_hash__in=_transfer_code_hashes(code))
        .values_list("learner_id", "used_at", "expires_at")
        .first()
    )
    if found is None:
        return None, False
    learner_id, used_at, expires_at = found
    return learner_id, used_at is None and expires_at > now


class TransferCodeUnknown(TransferCodeInvalid):
    """No code like it can be used: mistyped, used or expired (a new one is the way on)."""


class TransferCodeMadeHere(Exception):
    """The code brings the progress this browser carries already: it is left for the other
    device (spent here, it would have said that another device shared the progress)."""


def transfer_code_redeem(*, code: str, current: Learner | None, now: datetime) -> Learner:
    """Adopt the progress behind a code in this browser; this browser's own progress joins it."""
    with transaction.atomic():
        transfer = (
            TransferCode.objects.select_for_update()
            .select_related("learner")
            .filter(
                code_hash__in=_transfer_code_hashes(code), used_at__isnull=True, expires_at__gt=now
            )
            .first()
        )
        if transfer is None:
            raise TransferCodeUnknown(CODE_DOES_NOT_WORK)
        if current is not None and transfer.learner_id == current.pk:
            raise TransferCodeMadeHere
        transfer.used_at = now
        transfer.save(update_fields=["used_at"])
    target = transfer.learner
    if current is not None:
        try:
            progress_file.merge(learner=target, items=progress_file.items_of(current))
        except progress_file.ImportUnderWay:
            TransferCode.objects.filter(pk=transfer.pk).update(used_at=None)
            raise TransferCodeInvalid(
                "Progress is being imported into the other device's record right now. Wait a "
                "minute, then enter the code again: it still works."
            ) from None
        except BadSubmission as error:  # the two together would keep too many answers
            TransferCode.objects.filter(pk=transfer.pk).update(used_at=None)
            raise TransferCodeInvalid(str(error)) from None
        current.delete()
    Learner.objects.filter(pk=target.pk).update(last_seen_at=now)
    return target


def question_memories_reset(*, question: Question) -> int:
    """Forget every learner's memory of a question whose right answer changed; logs stay."""
    deleted, _ = Memory.objects.filter(question=question).delete()
    return deleted
