"""Reads for the practice pages, each in a fixed number of queries: the learner, rounds, due
items. The sky is read in `constellations`, the learner's progress across lessons in `learning`."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import cast

from django.contrib.sessions.backends.base import SessionBase
from django.db import connection
from django.db.models import Q
from django.http import HttpRequest

from lessons.models import Flashcard, Lesson, Question, Subject
from lightmysky.lib import rawrows
from lightmysky.lib.http import SiteRequest
from lightmysky.sessions import SessionStore
from practice import rounds, scheduling
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    Memory,
    Review,
    Round,
)

REVIEW_BATCH_SIZE = 8


class LearnerRequest(SiteRequest):
    """A request to a practice page, for the type checker."""

    learner: Learner | None  # read once per request by learner_for_request


def learner_for_session(session: SessionBase) -> Learner | None:
    """The browser's learner, if it has answered anything; never creates one."""
    public_id = session.get(LEARNER_SESSION_KEY)
    return Learner.objects.filter(public_id=public_id).first() if public_id else None


def learner_for_request(request: HttpRequest) -> Learner | None:
    """The browser's learner for reading pages, without a query when the session names it.

    Writes verify the learner (services.learner_get_or_create); reads trust the session, which
    the server alone writes and which forget flushes. A session can outlive its learner, when
    prune_learners removes an idle one (LEARNER_IDLE_DAYS and SESSION_COOKIE_AGE are set
    separately): reads then find no memories, and the next write starts a new learner.
    """
    learner_request = cast(LearnerRequest, request)
    if not hasattr(learner_request, "learner"):
        pk = request.session.get(LEARNER_PK_SESSION_KEY)
        public_id = request.session.get(LEARNER_SESSION_KEY)
        if pk and public_id:
            learner_request.learner = Learner(pk=pk, public_id=public_id)
        else:
            learner_request.learner = learner_for_session(request.session)
    return learner_request.learner


def round_progress(
    *, learner: Learner | None, lesson: Lesson, questions: list[Question], key: str | None = None
) -> rounds.RoundProgress:
    """The learner's round of this lesson with this key, or else their latest one, with its
    answers: one query, on every answer and every practice page (whose whole page reads it
    with the lesson's stars: `constellations.lesson_stars_and_round`)."""
    progress = rounds.RoundProgress(questions=questions)
    if learner is None:
        return progress
    params: list = [learner.pk, key, lesson.pk] if key else [learner.pk, lesson.pk]
    return with_round(progress, rawrows.fetch(round_with_answers_sql(by_key=bool(key)), params))


def round_progress_and_memory(
    *,
    learner: Learner,
    lesson: Lesson,
    questions: list[Question],
    key: str,
    question: Question,
    session: SessionBase | None = None,
) -> tuple[rounds.RoundProgress, tuple[Memory | None, str | None]]:
    """The round of this key with its answers, as `round_progress` reads it, and the learner's
    memory of `question` with its row version (`xmin`), as an answer on PostgreSQL writes it
    (`services._review_write_at_once`): an answer's two reads in one query, or none when they
    were read with the browser's `session` (`read_answer_along`). PostgreSQL only."""
    rows = None
    if isinstance(session, SessionStore):
        statement, params = _answer_read(lesson.public_id, key, question.pk)
        rows = session.rows_read_along(statement, params, learner_id=learner.pk)
    if rows is None:
        rows = rawrows.fetch(
            _round_with_answers_and_memory_sql(),
            [learner.pk, key, lesson.pk, learner.pk, question.pk],
        )
    # The memory and its version are the same on every row: read from the first.
    at = _round_width() + len(Review._meta.concrete_fields)
    memory_end = at + len(Memory._meta.concrete_fields)
    [(memory,)] = rawrows.from_rows([rows[0][at:memory_end]], (Memory,))
    progress = with_round(rounds.RoundProgress(questions=questions), rows)
    return progress, (cast(Memory | None, memory), cast(str | None, rows[0][memory_end]))


def read_answer_along(
    session: SessionBase, *, lesson_public_id: str, key: str, question_id: int
) -> None:
    """Have the read of the browser's session (on PostgreSQL, with a POST's rate-limit count)
    also read what `round_progress_and_memory` reads for an answer to this question of this
    round: the answer's reads and count in one round trip. The learner is the one the session's
    row names, and is trusted only if the session's data names them too."""
    if isinstance(session, SessionStore):
        statement, params = _answer_read(lesson_public_id, key, question_id)
        session.read_along(statement, params, using=connection.alias)


def _answer_read(lesson_public_id: str, key: str, question_id: int) -> tuple[str, list]:
    lesson = f"(SELECT id FROM {Lesson._meta.db_table} WHERE public_id = %s)"
    sql = _round_with_answers_and_memory_sql(learner=SessionStore.LEARNER_ID, lesson=lesson)
    return sql, [key, lesson_public_id, question_id]


@functools.cache
def _round_width() -> int:
    return len(Round._meta.concrete_fields)


@functools.cache
def _round_pk_at() -> int:
    return [field.attname for field in Round._meta.concrete_fields].index(Round._meta.pk.attname)


def with_round(progress: rounds.RoundProgress, rows: Sequence[Sequence]) -> rounds.RoundProgress:
    """`progress` with the round and its answers, from rows of the round's columns, then an
    answer's (null without one), then any others, in any order (`round_with_answers_sql`);
    rows whose round's columns are null are no round. The round, the same on every row, is
    made once: making it on each row was a third of the practice page's reading."""
    width = _round_width()
    pk_at = _round_pk_at()
    rows = [row for row in rows if row[pk_at] is not None]
    if not rows:
        return progress
    [(round_,)] = rawrows.from_rows([rows[0][:width]], (Round,))
    progress.round = cast(Round, round_)
    answers_end = width + len(Review._meta.concrete_fields)
    answers = rawrows.from_rows([row[width:answers_end] for row in rows], (Review,))
    reviews = [cast(Review, review) for (review,) in answers if review is not None]
    for review in sorted(reviews, key=_in_round_order):
        review.round = progress.round
        progress.reviews.append(review)
    progress.questions = rounds.in_stored_order(progress.questions, progress.round.question_order)
    return progress


def _in_round_order(review: Review) -> tuple[bool, int, int]:
    return review.round_step is None, review.round_step or 0, review.pk


@functools.cache
def round_with_answers_sql(
    *, by_key: bool, more_columns: str = "", learner: str = "%s", lesson: str = "%s"
) -> str:
    """A learner's round of a lesson joined to its answers, one row each, with `more_columns`
    after the models' columns: with `by_key` the round of a key (params: the learner's pk, the
    key, the lesson's pk), else the latest (params: the learner's pk, the lesson's). `learner`
    and `lesson` may name them otherwise than by a parameter."""
    round_table, review_table = Round._meta.db_table, Review._meta.db_table
    if by_key:
        chosen = f"r.id = ({_round_by_key(learner)}) AND r.lesson_id = {lesson}"
    else:
        chosen = (
            f"r.id = (SELECT id FROM {round_table} WHERE learner_id = {learner}"
            f" AND lesson_id = {lesson} ORDER BY started_at DESC, id DESC LIMIT 1)"
        )
    return (
        f"SELECT {rawrows.columns(Round, 'r')}, {rawrows.columns(Review, 'v')}{more_columns}"
        f" FROM {round_table} r LEFT OUTER JOIN {review_table} v ON v.round_id = r.id"
        f" WHERE {chosen}"
    )


@functools.cache
def _round_with_answers_and_memory_sql(*, learner: str = "%s", lesson: str = "%s") -> str:
    """At least one row, round or none: the round's and review's columns null without one.
    Params: the learner's pk, the round's key, the lesson's, the learner's again and the
    question's. `learner` and `lesson` may name them otherwise than by a parameter."""
    round_table, review_table = Round._meta.db_table, Review._meta.db_table
    return (
        f"SELECT {rawrows.columns(Round, 'r')}, {rawrows.columns(Review, 'v')},"
        f" {rawrows.columns(Memory, 'm')}, m.xmin::text"
        f" FROM (SELECT 1) AS one"
        f" LEFT OUTER JOIN {round_table} r"
        f" ON r.id = ({_round_by_key(learner)}) AND r.lesson_id = {lesson}"
        f" LEFT OUTER JOIN {review_table} v ON v.round_id = r.id"
        f" LEFT OUTER JOIN {Memory._meta.db_table} m"
        f" ON m.learner_id = {learner} AND m.question_id = %s"
    )


def _round_by_key(learner: str) -> str:
    """The learner's round of a key (a parameter), found by the key's unique index whatever the
    planner's statistics say; its lesson is checked outside. With the lesson inside, stale
    statistics once had PostgreSQL read every round of the lesson (docs/performance.md,
    nineteenth pass)."""
    return f'SELECT id FROM {Round._meta.db_table} WHERE learner_id = {learner} AND "key" = %s'


def memories_of(learner: Learner | None, **filters) -> dict[tuple[str, int], tuple]:
    """(memory state, last rating, evidence, ever lit) by (kind, item id)."""
    if learner is None:
        return {}
    rows = Memory.objects.filter(learner_id=learner.pk, **filters).values_list(
        "question_id", "flashcard_id", *Memory.STATE_FIELDS, "last_rating", "evidence", "lit_at"
    )
    memories = {}
    for question_id, flashcard_id, *state, last_rating, evidence, lit_at in rows:
        key = ("question", question_id) if question_id else ("flashcard", flashcard_id)
        memories[key] = (scheduling.MemoryState(*state), last_rating, evidence, lit_at is not None)
    return memories


def lesson_memories(*, learner: Learner | None, lesson: Lesson) -> dict[tuple[str, int], tuple]:
    """The learner's memory of each item of a lesson, in one query (none for a visitor)."""
    return memories_of(learner, lesson_id=lesson.pk)


def new_round_questions(
    *, questions: list[Question], memories: dict[tuple[str, int], tuple], now: datetime
) -> list[Question]:
    by_question = {
        pk: (state, last_rating)
        for (kind, pk), (state, last_rating, *_) in memories.items()
        if kind == "question"
    }
    return rounds.question_order(questions, by_question, now)


def memory_of_item(*, learner: Learner, kind: str, item_id: int) -> Memory | None:
    """The learner's memory of one published question or flashcard, with what its page shows."""
    field = "question_id" if kind == "question" else "flashcard_id"
    return (
        Memory.objects.filter(
            learner=learner, lesson__status=Lesson.Status.PUBLISHED, **{field: item_id}
        )
        .select_related("lesson__subject", "question", "flashcard")
        .first()
    )


def last_attempt_key(item: Memory | Review, *, before: Review | None = None) -> str | None:
    """The attempt of the learner's latest answer to this question (before `before`)."""
    if item.question_id is None:
        return None
    reviews = Review.objects.filter(learner_id=item.learner_id, question_id=item.question_id)
    if before is not None:
        reviews = reviews.filter(
            Q(reviewed_at__lt=before.reviewed_at)
            | Q(reviewed_at=before.reviewed_at, pk__lt=before.pk)
        )
    return reviews.order_by("-reviewed_at", "-pk").values_list("attempt", flat=True).first()


def flashcard_memory(*, learner: Learner | None, flashcard: Flashcard):
    """The learner's memory state of one flashcard (None: never rated), in one query."""
    if learner is None:
        return None
    row = (
        Memory.objects.filter(learner_id=learner.pk, flashcard=flashcard)
        .values_list(*Memory.STATE_FIELDS)
        .first()
    )
    return scheduling.MemoryState(*row) if row else None


def next_lesson_to_learn(*, learner: Learner | None) -> Lesson | None:
    """A published lesson the learner has not started whose "learn first" lessons they have
    all started, in the catalogue's order; in one query. It reads the lessons the learner has
    started once, then walks the published lessons in the catalogue's order (an index) and
    stops at the first that fits. Written out: building it with the ORM cost ten times as much
    as running it."""
    params = [learner.pk if learner else None, Lesson.Status.PUBLISHED.value]
    rows = rawrows.instances(_next_lesson_sql(), params, (Lesson, Subject))
    if not rows:
        return None
    lesson, subject = cast(tuple[Lesson, Subject], rows[0])
    lesson.subject = subject
    return lesson


@functools.cache
def _next_lesson_sql() -> str:
    # NOT IN a set read once, rather than a lookup of the learner's memories for each lesson:
    # PostgreSQL plans the statement once for every learner, and a plan fit for a learner with
    # few memories took half a second for one with 10,000.
    needs_first = Lesson.needs_first.through._meta.db_table
    return (
        "WITH started AS MATERIALIZED"
        f" (SELECT lesson_id FROM {Memory._meta.db_table} WHERE learner_id = %s)"
        f" SELECT {rawrows.columns(Lesson, 'l')}, {rawrows.columns(Subject, 's')}"
        f" FROM {Lesson._meta.db_table} l JOIN {Subject._meta.db_table} s ON s.id = l.subject_id"
        " WHERE l.status = %s AND l.id NOT IN (SELECT lesson_id FROM started)"
        f" AND NOT EXISTS (SELECT 1 FROM {needs_first} n WHERE n.from_lesson_id = l.id"
        " AND n.to_lesson_id NOT IN (SELECT lesson_id FROM started))"
        " ORDER BY l.title LIMIT 1"
    )


def next_due_at(*, learner: Learner, now: datetime) -> datetime | None:
    memory = (
        Memory.objects.filter(learner=learner, due__gt=now, lesson__status=Lesson.Status.PUBLISHED)
        .order_by("due")
        .only("due")
        .first()
    )
    return memory.due if memory else None


def paper_reviews(*, learner: Learner, lesson: Lesson, batch: str) -> list[Review]:
    """The reviews one typed-in worksheet recorded, in question order."""
    return list(
        Review.objects.filter(
            learner=learner, lesson=lesson, attempt__startswith=f"paper:{batch}:"
        ).order_by("question__position")
    )
