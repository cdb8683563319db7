"""Every write a learner causes: answers, self-ratings, rounds, and the learner itself."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypedDict, cast

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.models import Session
from django.db import IntegrityError, connection, transaction
from django.db.models import Model
from django.utils.crypto import salted_hmac

from lessons.models import Flashcard, Grade, Lesson, Question
from lightmysky import metrics
from lightmysky.lib import rawrows
from practice import progress_file, rounds, scheduling, selectors
from practice.attempts import Attempt, BadSubmission
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SEEN_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    LearnerGone,
    Memory,
    Review,
    Round,
    SessionEnded,
    TransferCode,
)
from practice.submissions import FlashcardRating, QuestionAnswer


def learner_get_or_create(
    *, session: SessionBase, browser_secret: str | None, now: datetime
) -> Learner:
    """The browser's learner, made at its first answer and remembered in its session.

    `browser_secret` is the browser's CSRF cookie: identical first answers racing each other
    before any session exists share one learner through its hash (a unique column). A browser
    whose session "Forget everything" ended gets none (SessionEnded).
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
    if getattr(session, "ended", False):
        raise SessionEnded
    found = Learner.objects.filter(public_id=public_id).first() if public_id else None
    if found is None:
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
    else:
        learner = found
        if now - learner.last_seen_at > timedelta(hours=12):
            Learner.objects.filter(pk=learner.pk).update(last_seen_at=now)
    learner_bind_session(session=session, learner=learner, now=now)
    return learner


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


def round_answer(
    *,
    learner: Learner,
    lesson: Lesson,
    questions: list[Question],
    answer: QuestionAnswer,
    now: datetime,
    preview: bool = False,
    session: SessionBase | None = None,
) -> tuple[Review, rounds.RoundProgress]:
    """Answer the current question of a practice round: load the round, refuse an answer to
    a step that is not the current one, record it, and finish the round after its last answer.

    The same form sent twice returns the review the first one recorded. The browser's
    `session` may have read the round already (`selectors.read_answer_along`).
    """
    attempt, question = answer.attempt, answer.question
    memory_read = None
    if connection.vendor == "postgresql":  # the memory as its write needs it, with the round
        progress, memory_read = selectors.round_progress_and_memory(
            learner=learner,
            lesson=lesson,
            questions=questions,
            key=attempt.round_key,
            question=question,
            session=session,
        )
    else:
        progress = selectors.round_progress(
            learner=learner, lesson=lesson, questions=questions, key=attempt.round_key
        )
    review = next((r for r in progress.reviews if r.attempt == attempt.key), None)
    if review is not None:
        return review, progress
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
        memory_read=memory_read,
    )
    if created:
        progress.round = progress.round or review.round
        progress.reviews.append(review)
    return review, progress


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
    memory_read: tuple[Memory | None, str | None] | None = None,
) -> tuple[Review, bool]:
    """Schedule a graded answer (Question.grade) and log the review.

    A `practice` answer (given after the right one was shown) is logged but not scheduled. A
    `preview` (staff, or a draft) is logged and scheduled, with the origin that keeps it out
    of the editors' analytics.

    `shown_at`, when the form was shown outside a round: if the learner has reviewed the item
    since (in another tab, or before a reload), this answer is the same sitting's and records
    nothing; the earlier review is returned.

    `memory_read`: the item's memory and its row version, if the caller has read them as
    `_memory_read` would unlocked (PostgreSQL), sparing the write a round trip.
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
        memory_read=memory_read,
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
    the race to create its memory row; a second try then finds that row (`_review_write`).
    """
    for try_number in (1, 2):
        try:
            review, created = _review_write(learner=learner, attempt=attempt, **fields)
            if created:
                transaction.on_commit(metrics.answer_recorded)
            return review, created
        except IntegrityError:
            fields["memory_read"] = None  # read again on a second try
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


def _review_write(
    *, memory_read: tuple[Memory | None, str | None] | None = None, **fields: Any
) -> tuple[Review, bool]:
    """Write one answer (see `_writes_for` for the fields). On PostgreSQL in one statement,
    if the item's memory is still as read (`memory_read`, if the caller read it, or read now)
    when it runs (tried twice); otherwise, and on SQLite, in a transaction that locks the
    memory first."""
    if connection.vendor == "postgresql":
        for _ in range(2):
            written = _review_write_at_once(memory_read or _memory_read(fields, lock=False), fields)
            if written is not None:
                return written
            memory_read = None  # changed since it was read: read it again
    return _review_write_locked(**fields)


@transaction.atomic
def _review_write_locked(**fields: Any) -> tuple[Review, bool]:
    if connection.features.has_select_for_update:  # the learner first: see _LEARNER_HELD
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {_LEARNER_HELD}", [fields["learner"].pk])
            if cursor.fetchone() is None:
                raise LearnerGone
    memory, _ = _memory_read(fields, lock=True)
    writes = _writes_for(memory, **fields)
    if isinstance(writes, Review):
        return writes, False
    round_, review = writes.round_, writes.review
    if round_ is not None and round_.pk is None:
        rawrows.save(round_)
        review.round = round_  # its primary key, known now
    # The answer's writes are written out (lightmysky.lib.rawrows): building them with the ORM
    # cost a third of an answer's time.
    rawrows.save(review)
    if writes.memory is not None:
        rawrows.save(writes.memory)
    if round_ is not None and writes.finishes_round:
        round_.finished_at = review.reviewed_at
        Round.objects.filter(pk=round_.pk).update(finished_at=round_.finished_at)
    return review, True


def _review_write_at_once(
    memory_read: tuple[Memory | None, str | None], fields: dict[str, Any]
) -> tuple[Review, bool] | None:
    """The answer's writes in one statement, without a transaction of its own: a transaction
    costs a round trip to begin it, one for each write and one to commit, and on PostgreSQL
    each costs more than the work. The memory, read unlocked (`memory_read`), is written only
    if no other answer has changed it since (its row version, `xmin`, unchanged); else nothing
    is written and None returned, to read it again. Unique constraints settle duplicates as in a
    transaction: the whole statement fails. The learner's row is held first (_LEARNER_HELD)."""
    memory, version = memory_read
    writes = _writes_for(memory, **fields)
    if isinstance(writes, Review):
        return writes, False
    round_, review, memory = writes.round_, writes.review, writes.memory
    new_round = round_ is not None and round_.pk is None
    shape = (
        None if memory is None else memory.pk is None,
        new_round,
        writes.finishes_round,
    )
    memory_values = [] if memory is None else rawrows.values(memory)
    round_values = rawrows.values(cast(Round, round_)) if new_round else []
    review_values = rawrows.values(review)
    if memory_values is None or round_values is None or review_values is None:
        return _review_write_locked(**fields)  # a value the database supplies: the ORM's
    if memory is not None and memory.pk is not None:
        memory_values += [memory.pk, version]
    if new_round:
        del review_values[_REVIEW_ROUND_AT]  # the new round's, from the statement itself
    params = [fields["learner"].pk, *memory_values, *round_values, *review_values]
    if writes.finishes_round:
        params += [review.reviewed_at, cast(Round, round_).pk]
    # In an atomic block (tests; a caller's transaction) a failing statement must not end it.
    atomic = transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext()
    with atomic, connection.cursor() as cursor:
        cursor.execute(_write_at_once_sql(*shape, settings.ANSWERS_WAIT_FOR_DISK), params)
        review_id, round_id, memory_id, learner_found, *_ = cursor.fetchone()
    if not learner_found:
        raise LearnerGone
    if review_id is None:  # the memory changed since it was read
        return None
    review.pk = review_id
    rawrows.saved(review)
    if new_round:
        cast(Round, round_).pk = round_id
        rawrows.saved(cast(Round, round_))
        review.round = round_
    if memory is not None:
        memory.pk = memory_id
        rawrows.saved(memory)
    if writes.finishes_round:
        cast(Round, round_).finished_at = review.reviewed_at
    return review, True


# Where the review's round sits among the values it is written with (rawrows.values).
_REVIEW_ROUND_AT = [
    field.attname for field in Review._meta.concrete_fields if not field.primary_key
].index("round_id")


# "Forget everything" locks the learner, then deletes its memories and rounds. An answer that
# locked one of those rows first and then, at its commit, the learner (its foreign keys' check)
# would deadlock with it: the answer holds the learner first, so one waits for the other.
_LEARNER_HELD = f"{Learner._meta.db_table} WHERE id = %s FOR KEY SHARE"


@functools.cache
def _write_at_once_sql(
    new_memory: bool | None, new_round: bool, finishes_round: bool, wait_for_disk: bool
) -> str:
    """One statement that holds the learner, then writes the memory (inserted if `new_memory`,
    updated if as read, neither if None), then only if it did: the new round, the review, the
    round's end. It returns their primary keys, and whether the learner was there.

    Unless `wait_for_disk` (settings.ANSWERS_WAIT_FOR_DISK), its commit (or the commit of a
    caller's transaction it runs in) does not wait for PostgreSQL to flush it to disk: waiting
    held the answer's rate about a tenth lower (docs/performance.md). All of an answer or none
    of it survives a crash; one committed in the last moments before a crash of the database
    or its machine (within 3 × wal_writer_delay, 0.6 s by default) may not (docs/deploy.md)."""
    parts = [f"l AS (SELECT 1 FROM {_LEARNER_HELD})"]
    written = "EXISTS (SELECT FROM l)"
    if new_memory is not None:
        if new_memory:
            values = ", ".join(_placeholders(Memory))
            parts.append(
                _inserting("m", Memory, f"SELECT {values} WHERE {written} ON CONFLICT DO NOTHING")
            )
        else:
            table, columns, primary_key = rawrows.quoted_columns(Memory)
            assignments = ", ".join(f"{column} = %s" for column in columns)
            parts.append(
                f"m AS (UPDATE {table} SET {assignments} WHERE {primary_key} = %s"
                f" AND xmin::text = %s AND {written} RETURNING {primary_key})"
            )
        written = "EXISTS (SELECT FROM m)"
    if new_round:
        values = ", ".join(_placeholders(Round))
        parts.append(_inserting("r", Round, f"SELECT {values} WHERE {written}"))
    review_values = _placeholders(Review)
    if new_round:
        review_values[_REVIEW_ROUND_AT] = f"(SELECT {_primary_key(Round)} FROM r)"
    parts.append(_inserting("v", Review, f"SELECT {', '.join(review_values)} WHERE {written}"))
    if finishes_round:
        table, _, primary_key = rawrows.quoted_columns(Round)
        parts.append(
            f"f AS (UPDATE {table} SET finished_at = %s WHERE {primary_key} = %s AND {written})"
        )
    found = [
        f"(SELECT {_primary_key(model)} FROM {name})" if present else "NULL"
        for name, model, present in (
            ("v", Review, True),
            ("r", Round, new_round),
            ("m", Memory, new_memory is not None),
        )
    ]
    found.append("EXISTS (SELECT FROM l)")
    if not wait_for_disk:  # for this transaction only; a column, so that it is run
        found.append("set_config('synchronous_commit', 'off', true)")
    return f"WITH {', '.join(parts)} SELECT {', '.join(found)}"


def _primary_key(model: type[Model]) -> str:
    return rawrows.quoted_columns(model)[2]


def _placeholders(model: type[Model]) -> list[str]:
    return ["%s"] * len(rawrows.quoted_columns(model)[1])


def _inserting(name: str, model: type[Model], rows: str) -> str:
    """A CTE `name` that inserts `rows` (a VALUES or a SELECT of every column but the primary
    key, in the order of `rawrows.values`) into `model`'s table, returning the primary key."""
    table, columns, primary_key = rawrows.quoted_columns(model)
    return f"{name} AS (INSERT INTO {table} ({', '.join(columns)}) {rows} RETURNING {primary_key})"


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
    if memory is not None and shown_at and memory.last_review and memory.last_review >= shown_at:
        earlier = (
            Review.objects.filter(
                learner=learner, question=question, flashcard=flashcard, reviewed_at__gte=shown_at
            )
            .order_by("reviewed_at", "pk")
            .first()
        )
        if earlier is not None:
            return earlier
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
        answer_kind=Review.Kind.LATER if practice else _answer_kind(memory, rating),
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
    memory.record_evidence(rating=rating, now=now)
    memory.set_memory_state(new_state, rating)
    return _Writes(round_, review, memory, finishes_round and round_ is not None)


def _memory_read(fields: dict[str, Any], *, lock: bool) -> tuple[Memory | None, str | None]:
    """The learner's memory of the answer's item (`_writes_for`'s fields): locked until the
    transaction ends if `lock` (on PostgreSQL; SQLite writes one at a time), else with its row
    version (PostgreSQL's `xmin`), to write it only if unchanged. Written out, as on every page:
    building it with the ORM cost more than running it, on every answer."""
    if fields.get("question") is not None:
        column, item_id = "question_id", fields["question"].pk
    else:
        column, item_id = "flashcard_id", fields["flashcard"].pk
    sql = _memory_read_sql(column, lock and connection.features.has_select_for_update, not lock)
    rows = rawrows.instances(sql, [fields["learner"].pk, item_id], (Memory,))
    if not rows:
        return None, None
    return cast(Memory, rows[0][0]), (None if lock else cast(str, rows[0][1]))


@functools.cache
def _memory_read_sql(column: str, for_update: bool, with_version: bool) -> str:
    return (
        f"SELECT {rawrows.columns(Memory, 'm')}{', m.xmin::text' if with_version else ''}"
        f" FROM {Memory._meta.db_table} m WHERE m.learner_id = %s AND m.{column} = %s"
        f"{' FOR UPDATE' if for_update else ''}"
    )


def _answer_kind(memory: Memory | None, rating: int) -> str:
    if memory is None:
        return Review.Kind.FIRST
    if rating == scheduling.AGAIN and memory.last_rating != scheduling.AGAIN:
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


def learner_forget(*, learner: Learner | None, session: SessionBase) -> None:
    """Erase the learner with everything stored for it, and end the browser's session.

    The learner's row is locked first: a request of the same browser that is writing for it
    (an answer, a transfer code) either finishes before the erasing starts, and is erased with
    the rest, or waits and then finds the learner gone. The session ends in the same
    transaction, so a request that finds the learner gone also finds its session gone, and
    does not start a new learner for a browser that asked to be forgotten; nor does one that
    reads the session only after it ended (`learner_get_or_create` raises SessionEnded).
    """
    with transaction.atomic():
        if learner is not None:
            locked = Learner.objects.select_for_update().filter(pk=learner.pk).first()
            if locked is not None:
                locked.delete()
        session.flush()


TRANSFER_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L to misread
TRANSFER_CODE_LENGTH = 8
TRANSFER_CODE_LIFETIME = timedelta(hours=24)


def normalise_transfer_code(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def _transfer_code_hash(code: str) -> str:
    """Keyed with SECRET_KEY: without the key, a copy of the table cannot be searched for codes
    (there are only 31^8 of them, a few GPU-minutes of plain hashing)."""
    return salted_hmac(
        "lightmysky.transfer-code", normalise_transfer_code(code), algorithm="sha256"
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


def transfer_code_redeem(*, code: str, current: Learner | None, now: datetime) -> Learner:
    """Adopt the progress behind a code in this browser; this browser's own progress joins it."""
    with transaction.atomic():
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
        try:
            progress_file.merge(learner=target, items=progress_file.items_of(current))
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
