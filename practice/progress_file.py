"""The progress file: what an export holds, how a file is read back, and how progress merges.

A browser's progress leaves the site as a JSON file (`GET /progress/export`) and comes back as
one (`POST /progress/import`); a transfer code merges one browser's progress into another's the
same way. Anyone can write such a file, so every limit on what a learner may store lives here.

Limits, and why these numbers:

- A file is at most 5 MB: the export of a learner with the largest history allowed below is
  about 4 MB, so every export can be imported again.
- An item keeps at most MAX_REVIEWS_PER_ITEM reviews. A practice round asks a question at most
  twice and the review queue once per due date, so 1,000 is a question practised as a whole
  round every day for well over a year. A file with more keeps the newest and says which items
  were trimmed.
- A learner keeps at most MAX_REVIEWS_PER_LEARNER reviews: 100 answers every day for more than
  a year. An import that would pass it is refused; answers on the site never are, and
  `prune_learners` trims the oldest reviews of a learner above it (their memory states stay).
- Only published questions and flashcards are imported, each at most once per file; items that
  are not (or no longer) on the site are skipped and counted.

Writes go in batches of WRITE_BATCH rows, each its own short transaction, after the whole file
has been checked: SQLite has one write lock for the whole database, and a learner's answer must
not wait behind someone's upload. A batch that fails leaves the earlier ones in place; importing
the same file again adds only what is missing.

Because the caps are checked before the first batch, two merges into one learner must never
check at the same time: a merge first claims its learner (Learner.import_started_at) and a
second one, sent meanwhile, is refused with ImportUnderWay. A claim, not a row lock held in one
transaction, so the batches stay short on SQLite.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import NoReturn

from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from lessons.models import PUBLIC_ID_PATTERN, AnswerNotAccepted, Flashcard, Lesson, Question
from practice import scheduling, sky
from practice.models import Learner, LearnerGone, Memory, Review
from practice.submissions import BadSubmission

# Version 2 records a question's answer as its choices' identities; version 1 had the letters
# of the written order, which are still read. Version 3 names an unlit star's evidence "unlit",
# as the pages do (EVIDENCE_NAMES).
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
WRITTEN_LETTERS = re.compile(r"^[A-F](,[A-F])*$")
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_REVIEWS_PER_ITEM = 1_000
MAX_REVIEWS_PER_LEARNER = 40_000
WRITE_BATCH = 1_000  # rows per write transaction: about 40 ms of SQLite's lock, 100 ms at most
READ_BATCH = 2_000
SEP = (",", ":")  # compact items: the largest export must stay under MAX_FILE_BYTES
# A claim older than this was left by a worker that died mid-merge (gunicorn kills one after
# 30 s); the learner may import again.
CLAIM_LIFETIME = timedelta(minutes=10)


def limits_in_words() -> str:
    return (
        f"A file may be up to {MAX_FILE_BYTES // 1024 // 1024} MB. A browser keeps up to "
        f"{MAX_REVIEWS_PER_LEARNER:,} answers, and up to {MAX_REVIEWS_PER_ITEM:,} for each item."
    )


ITEM_PATTERN = re.compile(r"^(question|flashcard):[0-9a-f]{1,16}$")
LESSON_PATTERN = re.compile(rf"^{PUBLIC_ID_PATTERN}$")
STATE_NAMES = {name: number for number, name in scheduling.STATES.items()}
# Files of versions 1 and 2 called an unlit star's evidence "none".
EVIDENCE_NAMES = {name: number for number, name in sky.EVIDENCE.items()} | {"none": sky.NO_EVIDENCE}
CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class ProgressReview:
    rating: int
    reviewed_at: datetime
    duration_ms: int | None
    answer: str
    correct: bool | None
    # Reviews read from a file are "imported"; a transfer code carries the site's own.
    origin: str = Review.Origin.IMPORTED
    answer_kind: str = Review.Kind.LATER
    # Given after the right answer was shown: kept, never replayed into the memory state.
    practice: bool = False


# The Review columns a ProgressReview holds, in its order.
REVIEW_FIELDS = tuple(review_field.name for review_field in fields(ProgressReview))


@dataclass(frozen=True)
class ProgressItem:
    lesson: str
    kind: str
    key: str
    memory: scheduling.MemoryState | None
    reviews: list[ProgressReview]
    # What the answers showed (Memory.evidence) and when the star first lit: None when a file
    # does not say (written before they existed), and then worked out from its reviews.
    evidence: int | None = None
    lit_at: datetime | None = None
    # Known for the site's own items, not read from files.
    last_rating: int | None = None
    missed: bool = False

    def scheduled_evidence(self, *, guess_rate: float, graded: dict) -> sky.Evidence:
        """What answering this item's scheduled reviews one by one on the site would have
        stored (sky.evidence_of), each review's correctness as the site grades its answer
        (`graded`: answer → correct)."""
        return sky.evidence_of(
            [
                (sky.outcome_of(r.rating, graded.get(r.answer, r.correct)), r.reviewed_at)
                for r in self.reviews
                if not r.practice
            ],
            guess_rate=guess_rate,
        )


# Reading a file ---------------------------------------------------------------------------------


# What every value this site would never have written means to a learner.
EDITED = "That file was changed after this site exported it: "
NOT_A_PROGRESS_FILE = (
    "That file is not a LightMySky progress file (version 1, 2 or 3, with a list of items)."
)


class _Checker:
    """Reads one field after another, failing with the place and the rule that was broken."""

    def __init__(self, where: str, data: object, now: datetime) -> None:
        if not isinstance(data, dict):
            raise BadSubmission(f"{EDITED}{where} is not an entry of its list.")
        self.where, self.data, self.now = where, data, now

    def fail(self, name: str, rule: str) -> NoReturn:
        raise BadSubmission(f"{EDITED}{self.where}: “{name}” {rule}.")

    def string(self, name: str, pattern: re.Pattern | None = None, max_length: int = 64) -> str:
        value = self.data.get(name)
        if not isinstance(value, str) or len(value) > max_length:
            self.fail(name, f"must be text of at most {max_length} characters")
        if pattern and not pattern.match(value):
            self.fail(name, "is not in the expected form")
        return value

    def number(self, name: str, low: float, high: float) -> float:
        value = self.data.get(name)
        rule = f"must be a number from {low} to {high}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(name, rule)
        if not low <= value <= high:
            self.fail(name, rule)
        return value

    def whole_number(self, name: str, low: int, high: int) -> int:
        value = self.data.get(name)
        rule = f"must be a whole number from {low} to {high}"
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(name, rule)
        if not low <= value <= high:
            self.fail(name, rule)
        return value

    def optional_whole_number(self, name: str, low: int, high: int) -> int | None:
        return None if self.data.get(name) is None else self.whole_number(name, low, high)

    def optional_moment(self, name: str) -> datetime | None:
        return None if self.data.get(name) is None else self.moment(name)

    def moment(self, name: str, *, past: bool = True) -> datetime:
        value = self.data.get(name)
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

    def boolean(self, name: str) -> bool | None:
        value = self.data.get(name)
        if value is not None and not isinstance(value, bool):
            self.fail(name, "must be true, false or null")
        return value


def read_upload(upload, *, now: datetime) -> list[ProgressItem]:
    """A progress file as LightMySky exports it, checked value by value; all else is refused."""
    if upload is None:
        raise BadSubmission("Choose a progress file (.json) to import.")
    if upload.size > MAX_FILE_BYTES:
        raise BadSubmission(f"That file is larger than {MAX_FILE_BYTES // 1024 // 1024} MB.")
    upload.seek(0)  # a view that is run again (a learner lost on the way) reads it again
    try:
        document = json.loads(upload.read().decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise BadSubmission(
            "That file is not a LightMySky progress file: it is not JSON, the form this site "
            "exports (a file cut short, or saved again by another program, is not)."
        ) from None
    except ValueError:  # an integer too long for Python to read
        raise BadSubmission(
            "That file is not a LightMySky progress file: it holds a number far too long."
        ) from None
    _refuse_unstorable_text(document)
    return read_document(document, now=now)


def _refuse_unstorable_text(document: object) -> None:
    """NUL characters and lone surrogates cannot be stored (PostgreSQL refuses NUL in text)."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str):
            if "\x00" in value:
                raise BadSubmission("That file holds a NUL character, which no export contains.")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise BadSubmission(
                    "That file holds text that is not valid Unicode (a lone surrogate)."
                ) from None


def read_document(document: object, *, now: datetime) -> list[ProgressItem]:
    if not isinstance(document, dict):
        raise BadSubmission(NOT_A_PROGRESS_FILE)
    top = _Checker("The file", document, now)
    version = top.data.get("version")
    items_data = top.data.get("items")
    if (
        type(version) is not int
        or version not in READABLE_VERSIONS
        or not isinstance(items_data, list)
    ):
        raise BadSubmission(NOT_A_PROGRESS_FILE)
    top.moment("exported_at")
    items = [_read_item(number, item, now) for number, item in enumerate(items_data, 1)]
    keys = [(item.lesson, item.kind, item.key) for item in items]
    if len(set(keys)) != len(keys):
        raise BadSubmission("The file names the same item twice.")
    return items


def _read_item(number: int, data: object, now: datetime) -> ProgressItem:
    check = _Checker(f"Item {number}", data, now)
    lesson = check.string("lesson", LESSON_PATTERN)
    item = check.string("item", ITEM_PATTERN)
    kind, key = item.split(":")
    if check.data.get("kind") != kind:
        check.fail("kind", f"must be {kind!r}, as its item says")
    memory = None
    state = check.data.get("state")
    if state is not None:
        if not isinstance(state, str) or state not in STATE_NAMES:
            check.fail("state", "must be learning, review or relearning")
        step = check.optional_whole_number("step", 0, 100)
        if state == "relearning" and step is None:
            # The scheduler cannot review a relearning item without knowing its step.
            check.fail("step", "is needed for an item in the relearning state")
        memory = scheduling.MemoryState(
            state=STATE_NAMES[state],
            step=step,
            stability=check.number("stability", 0.001, 1_000_000),
            difficulty=check.number("difficulty", 1, 10),
            due=check.moment("due", past=False),
            last_review=check.moment("last_review"),
        )
    evidence = check.data.get("evidence")
    if evidence is not None and (not isinstance(evidence, str) or evidence not in EVIDENCE_NAMES):
        check.fail("evidence", "must be unlit, kindled or lit")
    lit_at = check.optional_moment("lit_at")
    reviews_data = check.data.get("reviews")
    if not isinstance(reviews_data, list):
        check.fail("reviews", "must be a list")
    reviews = []
    for index, review in enumerate(reviews_data, 1):
        review_check = _Checker(f"Item {number}, review {index}", review, now)
        reviews.append(
            ProgressReview(
                rating=review_check.whole_number("rating", 1, 4),
                reviewed_at=review_check.moment("reviewed_at"),
                duration_ms=review_check.optional_whole_number("duration_ms", 0, 86_400_000),
                answer=review_check.string("answer", max_length=32),
                correct=review_check.boolean("correct"),
                practice=bool(review_check.boolean("practice")),
            )
        )
    return ProgressItem(
        lesson=lesson,
        kind=kind,
        key=key,
        memory=memory,
        reviews=reviews,
        evidence=EVIDENCE_NAMES[evidence] if memory and evidence is not None else None,
        lit_at=lit_at,
    )


# Writing a file ---------------------------------------------------------------------------------


def items_of(learner: Learner) -> Iterator[ProgressItem]:
    """Everything stored for a learner, item by item, its reviews read in batches."""
    memories = {
        (question_id, flashcard_id): {
            "memory": scheduling.MemoryState(*state),
            "last_rating": last_rating,
            "missed": missed,
            "evidence": evidence,
            "lit_at": lit_at,
        }
        for question_id, flashcard_id, *state, last_rating, missed, evidence, lit_at in (
            Memory.objects.filter(learner=learner).values_list(
                "question_id",
                "flashcard_id",
                *Memory.STATE_FIELDS,
                "last_rating",
                "missed",
                "evidence",
                "lit_at",
            )
        )
    }
    reviewed = set(
        Review.objects.filter(learner=learner)
        .order_by()
        .values_list("question_id", "flashcard_id")
        .distinct()
    )
    names = _item_names(set(memories) | reviewed)
    rows = (
        Review.objects.filter(learner=learner)
        .order_by(F("question_id").asc(nulls_first=True), "flashcard_id", "reviewed_at", "pk")
        .values_list("question_id", "flashcard_id", *REVIEW_FIELDS)
        .iterator(chunk_size=READ_BATCH)
    )
    for ids, group in itertools.groupby(rows, key=lambda row: row[:2]):
        reviews = [ProgressReview(*row[2:]) for row in group]
        yield ProgressItem(*names[ids], reviews=reviews, **memories.pop(ids, {"memory": None}))
    for ids, memory in memories.items():
        yield ProgressItem(*names[ids], reviews=[], **memory)


def _item_names(ids: set[tuple]) -> dict[tuple, tuple[str, str, str]]:
    """(lesson public id, kind, key) for each (question id, flashcard id), in two queries; a
    retired question's answers are the learner's too, so they are named as well."""
    names = {}
    for kind, model, position in (("question", Question, 0), ("flashcard", Flashcard, 1)):
        pks = [pair[position] for pair in ids if pair[position]]
        for pk, lesson, key in model._base_manager.filter(pk__in=pks).values_list(
            "pk", "lesson__public_id", "key"
        ):
            names[(pk, None) if position == 0 else (None, pk)] = (lesson, kind, key)
    return names


def export_chunks(learner: Learner | None, *, now: datetime) -> Iterator[str]:
    """The export as JSON text, an item at a time, for a streaming response."""
    header = {
        "version": FORMAT_VERSION,
        "exported_at": _iso(now),
        "scheduler": scheduling.SchedulerSettings.from_django().as_dict(),
    }
    yield json.dumps(header, indent=2)[:-2] + ',\n  "items": ['
    items = items_of(learner) if learner is not None else iter(())
    config = scheduling.SchedulerSettings.from_django()
    for number, item in enumerate(items):
        document = _item_document(item, now=now, config=config)
        yield ("," if number else "") + "\n    " + json.dumps(document, separators=SEP)
    yield "\n  ]\n}\n"


def _item_document(
    item: ProgressItem, *, now: datetime, config: scheduling.SchedulerSettings
) -> dict:
    memory = item.memory
    evidence = item.evidence or sky.NO_EVIDENCE
    return {
        "lesson": item.lesson,
        "item": f"{item.kind}:{item.key}",
        "kind": item.kind,
        # The star as the sky showed it at export time: said for people and agents, not read back.
        "star": ", ".join(
            sky.star_state(memory, now, config, evidence=evidence, missed=item.missed).words
        ),
        "evidence": sky.EVIDENCE[evidence] if memory else None,
        "lit_at": _iso(item.lit_at) if item.lit_at else None,
        "state": scheduling.STATES[memory.state] if memory else None,
        "step": memory.step if memory else None,
        "stability": memory.stability if memory else None,
        "difficulty": memory.difficulty if memory else None,
        "due": _iso(memory.due) if memory else None,
        "last_review": _iso(memory.last_review) if memory and memory.last_review else None,
        "reviews": [
            {
                "rating": review.rating,
                "reviewed_at": _iso(review.reviewed_at),
                "duration_ms": review.duration_ms,
                "answer": review.answer,
                "correct": review.correct,
                "practice": review.practice,
            }
            for review in item.reviews
        ],
    }


def _iso(moment: datetime) -> str:
    return scheduling.utc(moment).isoformat().replace("+00:00", "Z")


# Merging progress into a learner ------------------------------------------------------------------


class ImportUnderWay(BadSubmission):
    """Another merge into the same learner is still being written."""


@contextmanager
def _one_merge_at_a_time(learner: Learner) -> Iterator[None]:
    """Claim the learner for one merge, or refuse with ImportUnderWay; LearnerGone if it no
    longer exists. One UPDATE decides, so of two merges sent together exactly one claims."""
    started = timezone.now()
    claimed = (
        Learner.objects.filter(pk=learner.pk)
        .filter(Q(import_started_at=None) | Q(import_started_at__lt=started - CLAIM_LIFETIME))
        .update(import_started_at=started)
    )
    if not claimed:
        if not Learner.objects.filter(pk=learner.pk).exists():
            raise LearnerGone
        raise ImportUnderWay(
            "Progress is already being imported into this browser. Wait until that import has "
            "finished, then try again."
        )
    try:
        yield
    finally:
        Learner.objects.filter(pk=learner.pk, import_started_at=started).update(
            import_started_at=None
        )


@dataclass
class MergeResult:
    items: int = 0
    reviews_added: int = 0
    states_taken: int = 0
    skipped: int = 0
    trimmed: list[str] = field(default_factory=list)  # items that kept only their newest reviews
    per_item_limit: int = MAX_REVIEWS_PER_ITEM

    @property
    def brought_nothing(self) -> bool:
        """The file's items were all here already, with every one of their answers."""
        return bool(self.items) and not (
            self.reviews_added or self.states_taken or self.skipped or self.trimmed
        )


def merge(*, learner: Learner, items: Iterable[ProgressItem]) -> MergeResult:
    """Merge items into a learner's progress: the union of review logs, the newer memory state.

    Everything is checked and decided before the first write, while this merge holds the
    learner's claim. Items that are not published on this site are skipped; importing the same
    file twice changes nothing the second time.
    """
    items = list(items)
    with _one_merge_at_a_time(learner):
        return _merge_claimed(learner, items)


def _merge_claimed(learner: Learner, items: list[ProgressItem]) -> MergeResult:
    result = MergeResult()
    targets = _published_targets(items)
    known_attempts = set(
        Review.objects.filter(learner=learner, attempt__startswith="import:").values_list(
            "attempt", flat=True
        )
    )
    stored = list(
        Review.objects.filter(learner=learner).values_list(
            "question_id", "flashcard_id", "reviewed_at", "rating"
        )
    )
    stored_identities = set(stored)
    stored_per_item: dict[tuple, int] = {}
    for question_id, flashcard_id, *_ in stored:
        stored_per_item[(question_id, flashcard_id)] = (
            stored_per_item.get((question_id, flashcard_id), 0) + 1
        )
    new_reviews: list[tuple] = []
    newer_states: dict[tuple, tuple[dict, scheduling.MemoryState, int, sky.Evidence]] = {}
    for item in items:
        target = targets.get((item.lesson, item.kind, item.key))
        if target is None:
            result.skipped += 1
            continue
        result.items += 1
        ids = (target.pk, None) if item.kind == "question" else (None, target.pk)
        item_fields = {
            "lesson_id": target.lesson_id,
            "question_id": ids[0],
            "flashcard_id": ids[1],
        }
        fresh = []
        for review in item.reviews:
            attempt = _import_attempt(item, review)
            if attempt in known_attempts or (*ids, review.reviewed_at, review.rating) in (
                stored_identities
            ):
                continue
            known_attempts.add(attempt)
            fresh.append((attempt, review))
        room = MAX_REVIEWS_PER_ITEM - stored_per_item.get(ids, 0)
        if len(fresh) > room:
            fresh = sorted(fresh, key=lambda pair: pair[1].reviewed_at)[-room:] if room > 0 else []
            result.trimmed.append(f"{item.kind} {item.key} of lesson {item.lesson}")
        grades: dict[str, tuple[str, bool | None]] = {}
        for attempt, review in fresh:
            if review.answer not in grades:
                grades[review.answer] = _graded(target, review.answer)
            answer, correct = grades[review.answer]
            new_reviews.append(
                (learner.pk, target.lesson_id, *ids, attempt, review.rating)
                + (review.reviewed_at, review.duration_ms, answer)
                + (correct, review.origin, review.answer_kind, review.practice)
            )
        if item.memory is not None:
            # The memory's last rating is its last scheduled review's: a practice answer after
            # it changed nothing.
            latest = max(
                (r for r in item.reviews if not r.practice),
                key=lambda r: r.reviewed_at,
                default=None,
            )
            rating = item.last_rating or (latest.rating if latest else scheduling.GOOD)
            if isinstance(target, Question):
                graded = {answer: correct for answer, (_, correct) in grades.items()}
                rate = sky.guess_rate(len(target.choices), several=target.takes_several)
            else:
                graded, rate = {}, sky.FLASHCARD_GUESS_RATE
            evidence = item.scheduled_evidence(guess_rate=rate, graded=graded)
            if item.evidence is not None:  # what the site said when it wrote the file
                evidence = replace(evidence, level=item.evidence)
            lit_at = _earliest(item.lit_at, evidence.lit_at)
            newer_states[ids] = (item_fields, item.memory, rating, replace(evidence, lit_at=lit_at))
    if len(stored) + len(new_reviews) > MAX_REVIEWS_PER_LEARNER:
        raise BadSubmission(
            f"This would keep {len(stored) + len(new_reviews):,} answers for this browser, "
            f"more than the {MAX_REVIEWS_PER_LEARNER:,} a browser may keep."
        )
    for start in range(0, len(new_reviews), WRITE_BATCH):
        with _write_batch():
            _insert_reviews(new_reviews[start : start + WRITE_BATCH])
    result.reviews_added = len(new_reviews)
    pending = list(newer_states.items())
    for start in range(0, len(pending), WRITE_BATCH):
        with _write_batch():
            result.states_taken += _take_newer_states(learner, pending[start : start + WRITE_BATCH])
    return result


ITEM_COLUMNS = ("learner_id", "lesson_id", "question_id", "flashcard_id", "attempt")
REVIEW_COLUMNS = (*ITEM_COLUMNS, *REVIEW_FIELDS)


def _insert_reviews(rows: list[tuple]) -> None:
    """Insert rows of REVIEW_COLUMNS in one statement run many times.

    Model instances and bulk_create made a 40,000-review import take 14 s, most of it building
    objects and SQL; a prepared statement takes a fraction of that. A row whose attempt the
    learner already has (the same file imported twice at once) is skipped.
    """
    reviewed_at = REVIEW_COLUMNS.index("reviewed_at")
    adapt = connection.ops.adapt_datetimefield_value
    rows = [(*row[:reviewed_at], adapt(row[reviewed_at]), *row[reviewed_at + 1 :]) for row in rows]
    table = connection.ops.quote_name(Review._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(name) for name in REVIEW_COLUMNS)
    placeholders = ", ".join(["%s"] * len(REVIEW_COLUMNS))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({columns}) VALUES ({placeholders}) ON CONFLICT DO NOTHING",
            rows,
        )


@contextmanager
def _write_batch() -> Iterator[None]:
    """One short write transaction; on SQLite, followed by a pause as long as it took.

    SQLite's write lock has no queue: a writer that finds it taken sleeps and tries again, and
    would keep missing it if the import took it back the instant it let go. The pause lets a
    learner's answer in between two batches.
    """
    started = time.perf_counter()
    with transaction.atomic():
        yield
    if connection.vendor == "sqlite":
        time.sleep(min(time.perf_counter() - started, 0.2))


Target = Question | Flashcard


def _published_targets(items: list[ProgressItem]) -> dict[tuple[str, str, str], Target]:
    """The published questions and flashcards that the items name, in two queries for each
    READ_BATCH items: a query names at most 2 × READ_BATCH values, well within SQLite's limit
    (32,766) and PostgreSQL's (65,535, with parameters bound by the server)."""
    targets: dict[tuple[str, str, str], Target] = {}
    for batch in itertools.batched(items, READ_BATCH):
        lessons = {item.lesson for item in batch}
        for kind, model in (("question", Question), ("flashcard", Flashcard)):
            keys = {item.key for item in batch if item.kind == kind}
            if not keys:
                continue
            rows = model.objects.filter(
                lesson__public_id__in=lessons,
                key__in=keys,
                lesson__status=Lesson.Status.PUBLISHED,
            ).select_related("lesson")
            for row in rows:
                targets[(row.lesson.public_id, kind, row.key)] = row
    return targets


def _graded(target: Target, answer: str) -> tuple[str, bool | None]:
    """A recorded answer as it is stored (letters of a version 1 file become the choices'
    identities) and whether it is right by today's question: None for flashcards and for
    answers that name no choice of it."""
    if not isinstance(target, Question):
        return answer, None
    try:
        if WRITTEN_LETTERS.match(answer):
            grade = target.grade_letters(answer.split(","))
        else:
            grade = target.grade(answer.split(","))
    except AnswerNotAccepted:
        return answer, None
    return grade.answer, grade.correct


def _earliest(*moments: datetime | None) -> datetime | None:
    return min((moment for moment in moments if moment is not None), default=None)


def _take_newer_states(learner: Learner, pending: list) -> int:
    """Take each item's memory state where it is newer than the one stored, with its evidence
    (in a transaction). The earlier of the two first-lit moments is kept either way: a star
    lit on either device has been lit, and "stars ever lit" never goes down."""
    taken = 0
    question_ids = [ids[0] for ids, _ in pending if ids[0]]
    flashcard_ids = [ids[1] for ids, _ in pending if ids[1]]
    existing = {
        (m.question_id, m.flashcard_id): m
        for m in Memory.objects.select_for_update().filter(
            Q(question_id__in=question_ids) | Q(flashcard_id__in=flashcard_ids),
            learner=learner,
        )
    }
    to_create, to_update, lit_earlier = [], [], []
    for ids, (item_fields, state, rating, evidence) in pending:
        memory = existing.get(ids)
        if (
            memory is not None
            and memory.last_review
            and not (state.last_review and state.last_review > memory.last_review)
        ):
            if _earliest(memory.lit_at, evidence.lit_at) != memory.lit_at:
                memory.lit_at = evidence.lit_at
                lit_earlier.append(memory)
            continue
        if memory is None:
            memory = Memory(learner_id=learner.pk, **item_fields)
            to_create.append(memory)
        else:
            to_update.append(memory)
        memory.evidence, memory.evidence_score = evidence.level, evidence.score
        memory.streak_since, memory.missed = evidence.streak_since, evidence.missed
        memory.lit_at = _earliest(memory.lit_at, evidence.lit_at)
        memory.set_memory_state(state, rating)
        taken += 1
    Memory.objects.bulk_create(to_create)
    Memory.objects.bulk_update(
        to_update,
        [*Memory.STATE_FIELDS, "last_rating", *Memory.EVIDENCE_FIELDS],
    )
    Memory.objects.bulk_update(lit_earlier, ["lit_at"])
    return taken


def _import_attempt(item: ProgressItem, review: ProgressReview) -> str:
    """A stable identity for an imported review, so a second import adds nothing."""
    identity = (
        f"{item.lesson}|{item.kind}:{item.key}|{review.reviewed_at.isoformat()}|{review.rating}"
    )
    return "import:" + hashlib.sha256(identity.encode()).hexdigest()[:48]


def trim_oldest_reviews() -> int:
    """Delete the oldest reviews of every learner who keeps more than the limit; memories stay."""
    limit, removed = MAX_REVIEWS_PER_LEARNER, 0
    crowded = (
        Review.objects.values("learner_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=limit)
        .values_list("learner_id", flat=True)
    )
    for learner_id in list(crowded):
        keep_from = (
            Review.objects.filter(learner_id=learner_id)
            .order_by("-reviewed_at", "-pk")
            .values_list("reviewed_at", flat=True)[limit - 1]
        )
        deleted, _ = Review.objects.filter(
            learner_id=learner_id, reviewed_at__lt=keep_from
        ).delete()
        removed += deleted
    return removed
