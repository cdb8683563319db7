"""Reads for the practice pages, each in a fixed number of queries: the learner, rounds, due
items. A learner's stars are read in `stars`, the whole sky in `sky_map`, the learner's progress
across lessons in `learning`."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from django.contrib.sessions.backends.base import SessionBase
from django.db import connection
from django.db.models import (
    Case,
    DateTimeField,
    Exists,
    F,
    FloatField,
    Func,
    OuterRef,
    Q,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.http import HttpRequest

from lessons.models import Flashcard, Lesson, Question
from lightmysky.lib.http import SiteRequest
from practice import scheduling, sky, submissions
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    Memory,
    Review,
    question_order,
)

REVIEW_SET_SIZE = 8

# A learner's memories as `memories_of` reads them: (memory state, missed, evidence, ever
# lit) by (kind, item id).
type Memories = dict[tuple[str, int], tuple]


class LearnerRequest(SiteRequest):
    """A request to a practice page, for the type checker."""

    learner: Learner | None  # read once per request by learner_for_request
    answers_recorded: int  # new answers, counted for /metrics (views.recorded)


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


# What a star needs of a memory, in the order `memories_from` reads them.
MEMORY_COLUMNS = (
    "question_id",
    "flashcard_id",
    *Memory.STATE_FIELDS,
    "missed",
    "evidence",
    "lit_at",
)


def memories_from(rows) -> Memories:
    """Memories from rows of MEMORY_COLUMNS (a row of nulls, from an outer join, is none)."""
    memories: Memories = {}
    for question_id, flashcard_id, *state, missed, evidence, lit_at in rows:
        if question_id:
            key = ("question", question_id)
        elif flashcard_id:
            key = ("flashcard", flashcard_id)
        else:
            continue
        memories[key] = (scheduling.MemoryState(*state), missed, evidence, lit_at is not None)
    return memories


def memories_of(learner: Learner | None, **filters) -> Memories:
    """(memory state, missed, evidence, ever lit) by (kind, item id)."""
    if learner is None:
        return {}
    return memories_from(
        Memory.objects.filter(learner_id=learner.pk, **filters).values_list(*MEMORY_COLUMNS)
    )


def lesson_memories(*, learner: Learner | None, lesson: Lesson) -> Memories:
    """The learner's memory of each item of a lesson, in one query (none for a visitor)."""
    return memories_of(learner, lesson_id=lesson.pk)


def new_round_questions(
    *, questions: list[Question], memories: Memories, now: datetime
) -> list[Question]:
    by_question = {
        pk: (state, missed)
        for (kind, pk), (state, missed, *_) in memories.items()
        if kind == "question"
    }
    return question_order(questions, by_question, now)


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


def flashcard_memory(
    *, learner: Learner | None, flashcard: Flashcard, now: datetime
) -> Memory | None:
    """The learner's memory of one flashcard, its schedule and evidence, and whether its
    answer was seen within the sitting (None: never rated)."""
    if learner is None:
        return None
    return (
        Memory.objects.filter(learner_id=learner.pk, flashcard=flashcard)
        .only(*Memory.STATE_FIELDS, *Memory.EVIDENCE_FIELDS)
        .with_answer_seen_since(now - sky.SITTING)
        .first()
    )


def next_lesson_to_learn(*, learner: Learner | None) -> Lesson | None:
    """A published lesson the learner has not started whose "learn first" lessons they have
    all started, the first in the catalogue's order, in one query. The lessons started are a
    set read once (not a lookup of memories per lesson), so the query costs the same for a
    learner with 10 memories as for one with 10,000."""
    started = Memory.objects.filter(learner=learner).values("lesson_id")
    unmet = Lesson.needs_first.through.objects.filter(from_lesson=OuterRef("pk")).exclude(
        to_lesson__in=started
    )
    return (
        Lesson.objects.published()
        .exclude(pk__in=started)
        .exclude(Exists(unmet))
        .select_related("subject")
        .order_by("title")
        .first()
    )


class DaysSince(Func):
    """The days from a datetime column to the moment `now`, as a number, and 0 for a column
    after it: retrievability's clock (scheduling.retrievability) in SQL."""

    output_field = FloatField()

    def __init__(self, column: str, now: datetime) -> None:
        super().__init__(Value(now, output_field=DateTimeField()), F(column))

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(
            compiler,
            connection,
            template="MAX(0, julianday(%(expressions)s))",
            arg_joiner=") - julianday(",
            **extra,
        )

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(
            compiler,
            connection,
            template="GREATEST(0, EXTRACT(EPOCH FROM %(expressions)s) / 86400)",
            arg_joiner=" - ",
            **extra,
        )


def first_due(*, learner: Learner, now: datetime) -> Memory | None:
    """The due item /review asks first, with its lesson and item: the least likely to be
    remembered. An item with no review or no stability yet comes first; then the most days
    since its last review for its stability (retrievability falls as that grows); then the
    earliest due, the oldest memory. An item answered within the sitting waits: its answer
    is still on the learner's mind (sky.SITTING). In one query, which finds the item with SQL
    written out: building its order with the ORM (`first_due_by_orm`) took half of /review's
    time."""
    moment = connection.ops.adapt_datetimefield_value(now)
    sitting_began = connection.ops.adapt_datetimefield_value(now - sky.SITTING)
    days = _DAYS_SINCE_LAST_REVIEW[connection.vendor]
    found = RawSQL(
        _FIRST_DUE_SQL.format(days=days),
        [learner.pk, moment, Lesson.Status.PUBLISHED.value, sitting_began, moment],
    )
    return (
        Memory.objects.filter(pk__in=found)
        .select_related("lesson__subject", "question", "flashcard")
        .first()
    )


# Days since the last review, as scheduling.retrievability counts them (none if in the future).
_DAYS_SINCE_LAST_REVIEW = {
    "sqlite": "MAX(0, julianday(%s) - julianday(last_review))",
    "postgresql": "GREATEST(0, EXTRACT(EPOCH FROM %s - last_review) / 86400)",
}
_FIRST_DUE_SQL = """
    SELECT id FROM practice_memory
    WHERE learner_id = %s AND due <= %s
        AND lesson_id NOT IN (SELECT id FROM lessons_lesson WHERE NOT (status = %s))
        AND NOT EXISTS (
            SELECT 1 FROM practice_review AS seen
            WHERE seen.learner_id = practice_memory.learner_id AND seen.reviewed_at >= %s
                AND (seen.question_id = practice_memory.question_id
                    OR seen.flashcard_id = practice_memory.flashcard_id)
        )
    ORDER BY
        CASE WHEN last_review IS NULL OR stability IS NULL OR stability = 0 THEN 0 ELSE 1 END,
        CASE WHEN last_review IS NULL OR stability IS NULL OR stability = 0 THEN 0
            ELSE {days} / stability END DESC,
        due, id
    LIMIT 1
"""


def answered_in_sitting(
    *, learner: Learner | None, question: Question | None, now: datetime
) -> bool:
    """Whether the learner answered this question within the sitting (sky.SITTING), and so was
    shown its right answer: answering it again now is practice, by the rule services applies
    (a memory whose answer was seen; an editor's reset of the question's memories ends it)."""
    if learner is None or question is None:
        return False
    memory = (
        Memory.objects.filter(learner=learner, question=question)
        .with_answer_seen_since(now - sky.SITTING)
        .only("pk")
        .first()
    )
    return memory is not None and memory.answer_seen_at is not None


def question_answers_in_sitting(
    *, learner: Learner | None, lesson: Lesson, now: datetime
) -> list[Review]:
    """The learner's answers to the lesson's questions within the sitting (sky.SITTING); none
    for a visitor."""
    if learner is None:
        return []
    return list(
        Review.objects.filter(
            learner=learner,
            lesson=lesson,
            question__isnull=False,
            reviewed_at__gte=now - sky.SITTING,
        )
    )


def learner_review(*, learner: Learner, pk: int, **conditions) -> Review | None:
    """One of the learner's own answers, named by an address (?reviewed=, ?rated=) to show what
    it did, with its item and lesson; None when it is not theirs or not what the page shows."""
    return (
        Review.objects.filter(learner_id=learner.pk, pk=pk, **conditions)
        .select_related("question", "flashcard", "lesson__subject")
        .first()
    )


def review_set_answers(*, learner: Learner, since: datetime) -> list[Review]:
    """The scheduled answers of a /review set that began at `since` (imports left out)."""
    return list(
        Review.objects.filter(learner=learner, practice=False, reviewed_at__gte=since).exclude(
            origin=Review.Origin.IMPORTED
        )
    )


def flashcard_set_ratings(
    *, learner: Learner, lesson: Lesson, set_start: int | None, now: datetime
) -> list[Review]:
    """The ratings of one flashcard set, oldest first: the learner's ratings of the lesson's
    cards from the set's first (`set_start`) on, within the sitting (an address kept for days
    sums up nothing old), leaving out imported ones."""
    ratings = (
        Review.objects.filter(
            learner=learner,
            lesson=lesson,
            flashcard__isnull=False,
            reviewed_at__gte=now - sky.SITTING,
        )
        .exclude(origin=Review.Origin.IMPORTED)
        .order_by("pk")
    )
    if set_start:
        ratings = ratings.filter(pk__gte=set_start)
    return list(ratings)


def flashcard_set_left_off(
    *, learner: Learner | None, lesson: Lesson, cards: list[Flashcard], now: datetime
) -> tuple[int, list[Flashcard], int] | None:
    """Where the learner's latest set of the lesson's cards stands, replayed from the ratings
    made in sets within the sitting (oldest first; not those of /review): the position of its
    next card, the cards rated Again in it and its first rating's id; None when no set is under
    way. A first showing of the first card begins a set; a rating out of turn leaves it as it
    was."""
    if learner is None:
        return None
    ratings = flashcard_set_ratings(learner=learner, lesson=lesson, set_start=None, now=now)
    position, start = 0, 0
    again: list[Flashcard] = []
    by_id = {card.pk: card for card in cards}
    for rating in ratings:
        card = by_id.get(rating.flashcard_id or 0)
        showing = submissions.set_showing(rating.attempt)
        if card is None or showing is None:
            continue
        if card == cards[0] and showing == "card":  # a set begins (again, from card 1)
            position, again = 0, []
        sequence = cards + again
        if card != sequence[position] or (showing == "again") != (position >= len(cards)):
            continue
        if position == 0:
            start = rating.pk
        if position < len(cards) and rating.rating == scheduling.AGAIN:
            again.append(card)
        position += 1
        if position == len(cards) + len(again):  # the set is done
            position, again = 0, []
    return (position, again, start) if position else None


def due_answers_seen(*, learner: Learner, now: datetime) -> tuple[int, datetime | None]:
    """How many due items the learner answered within the sitting (first_due leaves them out),
    and from when the first of them can be asked (pages show it at the next whole minute)."""
    due = (
        Memory.objects.filter(learner_id=learner.pk, due__lte=now)
        .in_published_lessons()
        .with_answer_seen_since(now - sky.SITTING)
    )
    seen = [memory.answer_seen_at for memory in due.only("pk") if memory.answer_seen_at]
    if not seen:
        return 0, None
    return len(seen), min(seen) + sky.SITTING


def first_due_by_orm(*, learner: Learner, now: datetime) -> Memory | None:
    unknown = Q(last_review__isnull=True) | Q(stability__isnull=True) | Q(stability=0)
    return (
        Memory.objects.filter(learner_id=learner.pk, due__lte=now)
        .in_published_lessons()
        .answer_not_seen_since(now - sky.SITTING)
        .annotate(
            known=Case(When(unknown, then=Value(0)), default=Value(1)),
            staleness=Case(
                When(unknown, then=Value(0.0)),
                default=DaysSince("last_review", now) / F("stability"),
                output_field=FloatField(),
            ),
        )
        .order_by("known", F("staleness").desc(), "due", "pk")
        .select_related("lesson__subject", "question", "flashcard")
        .first()
    )


def next_due_at(*, learner: Learner, now: datetime) -> datetime | None:
    memory = (
        Memory.objects.filter(learner=learner, due__gt=now, lesson__status=Lesson.Status.PUBLISHED)
        .order_by("due")
        .only("due")
        .first()
    )
    return memory.due if memory else None


def practised_since(
    *, learner: Learner, questions: list[Question], since: datetime
) -> tuple[int, int]:
    """How many of these questions were practised after a moment, and how many of them right
    by their latest practice answer ("Practise the ones I missed", after a round)."""
    latest = {
        question_id: correct
        for question_id, correct in Review.objects.filter(
            learner_id=learner.pk, question__in=questions, practice=True, reviewed_at__gt=since
        )
        .order_by("reviewed_at", "pk")
        .values_list("question_id", "correct")
    }
    return len(latest), sum(1 for correct in latest.values() if correct)


def paper_reviews(*, learner: Learner, lesson: Lesson, batch: str) -> list[Review]:
    """The reviews one typed-in worksheet recorded, in question order."""
    return list(
        Review.objects.filter(
            learner=learner, lesson=lesson, attempt__startswith=f"paper:{batch}:"
        ).order_by("question__position")
    )
