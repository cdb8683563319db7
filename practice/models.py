from __future__ import annotations

import secrets
from datetime import datetime

from django.db import models
from django.db.models import Q
from django.utils import timezone

from lessons.models import Flashcard, Lesson, Question
from practice import scheduling, sky

# Where a browser's session keeps its learner: the public id, the primary key (so pages read
# the learner without a query) and when the learner was last marked as seen (for pruning).
LEARNER_SESSION_KEY = "learner"
LEARNER_PK_SESSION_KEY = "learner_pk"
LEARNER_SEEN_SESSION_KEY = "learner_seen"


def new_learner_id() -> str:
    return secrets.token_urlsafe(18)


def new_round_key() -> str:
    return secrets.token_urlsafe(12)


class ItemKind(models.TextChoices):
    QUESTION = "question", "Question"
    FLASHCARD = "flashcard", "Flashcard"


class Learner(models.Model):
    """An anonymous browser. Its random id lives in the session, never the session key itself."""

    public_id = models.CharField(max_length=32, unique=True, default=new_learner_id)
    # A hash of the browser's CSRF cookie at the first answer: two first answers sent at once
    # (a double click before any session exists) find the same learner instead of making two.
    browser_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"Learner {self.public_id[:8]}…"


class LearnerGone(Exception):
    """The session named a learner that no longer exists (pruned, or forgotten elsewhere)."""


class SessionEnded(Exception):
    """The browser's session was ended by "Forget everything" while this request was on its
    way: nothing is recorded, and no new learner is started for it."""


class LearnerItem(models.Model):
    """A learner's link to one item: a question or a flashcard of a lesson, never both."""

    # No index of their own for the learner and the question: each subclass's indexes begin
    # with them (Memory's and Review's Meta), and every answer wrote both in vain.
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, db_index=False)
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE)
    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, null=True, blank=True, db_index=False
    )
    flashcard = models.ForeignKey(Flashcard, on_delete=models.CASCADE, null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def kind(self) -> str:
        return ItemKind.QUESTION if self.question_id else ItemKind.FLASHCARD

    @property
    def item(self) -> Question | Flashcard:
        item = self.question if self.question_id else self.flashcard
        if item is None:  # the table's check constraint rules this out
            raise ValueError(f"{self} names neither a question nor a flashcard")
        return item


def one_item_constraint(name: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=Q(question__isnull=False, flashcard__isnull=True)
        | Q(question__isnull=True, flashcard__isnull=False),
        name=name,
    )


class MemoryQuerySet(models.QuerySet["Memory"]):
    def due(self, now) -> MemoryQuerySet:
        return self.filter(due__lte=now)

    def in_published_lessons(self) -> MemoryQuerySet:
        """Memories of published lessons, found as "not in a draft": the drafts are few and
        their own index (lesson_unpublished) finds them at once, where joining every memory to
        its lesson read the lesson table once a memory."""
        return self.exclude(lesson__in=Lesson.objects.exclude(status=Lesson.Status.PUBLISHED))


class Memory(LearnerItem):
    """The FSRS memory state of one learner for one item, in indexed columns."""

    state = models.PositiveSmallIntegerField(choices=list(scheduling.STATES.items()))
    step = models.PositiveSmallIntegerField(null=True, blank=True)
    stability = models.FloatField(null=True, blank=True)
    difficulty = models.FloatField(null=True, blank=True)
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    last_rating = models.PositiveSmallIntegerField(choices=list(scheduling.RATINGS.items()))
    # What the scheduled answers since the last miss show (sky.evidence_after): none, kindled
    # or lit. Set where a scheduled answer moves the memory on; practice answers never touch it.
    evidence = models.PositiveSmallIntegerField(
        choices=list(sky.EVIDENCE.items()), default=sky.NO_EVIDENCE, db_default=sky.NO_EVIDENCE
    )
    # The first time the learner's memory of the item was confirmed on a later day. Never
    # cleared, so "stars ever lit" (memories with it set) never goes down.
    lit_at = models.DateTimeField(null=True, blank=True)

    objects = MemoryQuerySet.as_manager()

    # The columns that hold a scheduling.MemoryState, in its order.
    STATE_FIELDS = ("state", "step", "stability", "difficulty", "due", "last_review")

    class Meta:
        verbose_name_plural = "memories"
        constraints = [
            one_item_constraint("memory_is_for_one_item"),
            models.UniqueConstraint(
                fields=["learner", "question"],
                condition=Q(question__isnull=False),
                name="memory_unique_per_question",
            ),
            models.UniqueConstraint(
                fields=["learner", "flashcard"],
                condition=Q(flashcard__isnull=False),
                name="memory_unique_per_flashcard",
            ),
        ]
        indexes = [
            models.Index(fields=["learner", "due"], name="memory_learner_due"),
            models.Index(fields=["learner", "lesson"], name="memory_learner_lesson"),
            models.Index(fields=["question", "difficulty"], name="memory_question_difficulty"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} memory of {self.learner_id}"

    @property
    def memory_state(self) -> scheduling.MemoryState:
        return scheduling.MemoryState(*(getattr(self, name) for name in self.STATE_FIELDS))

    def set_memory_state(self, memory: scheduling.MemoryState, rating: int) -> None:
        for name in self.STATE_FIELDS:
            setattr(self, name, getattr(memory, name))
        self.last_rating = rating

    def record_evidence(self, *, rating: int, now: datetime) -> None:
        """Move the evidence on by one scheduled review, before its state is set: the previous
        review is still `last_review` (see sky.evidence_after)."""
        self.evidence, self.lit_at = sky.evidence_after(
            self.evidence,
            self.lit_at,
            rating=rating,
            graded=self.question_id is not None,
            previous_review=self.last_review,
            now=now,
        )


class Round(models.Model):
    """One pass through a lesson's eight questions, with missed ones asked again at the end."""

    # Indexed by the key's unique constraint and `round_latest`, which begin with the learner.
    learner = models.ForeignKey(
        Learner, on_delete=models.CASCADE, related_name="rounds", db_index=False
    )
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=32)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The question ids in the order this round asks them, fixed when it begins.
    question_order = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "key"], name="round_key_unique_per_learner")
        ]
        indexes = [models.Index(fields=["learner", "lesson", "-started_at"], name="round_latest")]

    def __str__(self) -> str:
        return f"Round {self.key} of {self.lesson_id}"


class ReviewOrigin(models.TextChoices):
    ANSWERED = "answered", "Answered on this site"
    IMPORTED = "imported", "Imported from a progress file"
    # Answered by a signed-in staff user, or on a draft (which only staff can open): scheduled
    # for that browser like any answer, never counted in the editors' analytics.
    PREVIEW = "preview", "A staff preview"


class AnswerKind(models.TextChoices):
    """Where an answer stands in the learner's history of the question."""

    FIRST = "first", "The learner's first answer"
    LAPSE = "lapse", "Wrong, after a right answer (forgotten)"
    LATER = "later", "Any later answer"


class Review(LearnerItem):
    """One answer or self-rating, kept so memory states can be replayed and parameters fitted."""

    Origin = ReviewOrigin
    Kind = AnswerKind

    round = models.ForeignKey(Round, on_delete=models.CASCADE, null=True, blank=True)
    round_step = models.PositiveSmallIntegerField(null=True, blank=True)
    # What makes a submission unique: the same form sent twice records one review.
    attempt = models.CharField(max_length=64)
    rating = models.PositiveSmallIntegerField(choices=list(scheduling.RATINGS.items()))
    reviewed_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    answer = models.CharField(max_length=32, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    # Imported reviews come from a file anyone can write, previews from the editors themselves:
    # they schedule the learner's own items but are left out of the editors' statistics.
    origin = models.CharField(
        max_length=8,
        choices=ReviewOrigin,
        default=ReviewOrigin.ANSWERED,
        db_default=ReviewOrigin.ANSWERED,
    )
    # An answer given after the right one was shown in the same sitting (the round's retry of a
    # missed question): kept and exported, but not evidence of memory, so never scheduled.
    practice = models.BooleanField(default=False, db_default=False)
    # Set when the answer is recorded, so each of the editors' statistics is a count over one
    # range of one index, however many reviews there are.
    answer_kind = models.CharField(
        max_length=5, choices=AnswerKind, default=AnswerKind.LATER, db_default=AnswerKind.LATER
    )

    class Meta:
        constraints = [
            one_item_constraint("review_is_for_one_item"),
            models.UniqueConstraint(
                fields=["learner", "attempt"], name="review_attempt_unique_per_learner"
            ),
            models.CheckConstraint(
                condition=Q(rating__gte=1, rating__lte=4), name="review_rating_1_to_4"
            ),
        ]
        indexes = [
            models.Index(fields=["learner", "reviewed_at"], name="review_learner_time"),
            models.Index(
                fields=["question", "origin", "practice", "answer_kind", "correct"],
                name="review_question_stats",
            ),
        ]
        ordering = ["reviewed_at", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} review rated {self.rating} at {self.reviewed_at:%Y-%m-%d %H:%M}"


class TransferCode(models.Model):
    """A short one-time code that lets another browser adopt a learner's progress."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="transfer_codes")
    # Only a keyed hash (HMAC with SECRET_KEY) is kept: a copy of the table without the key
    # cannot be searched for live codes.
    code_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Transfer code for {self.learner_id}, expires {self.expires_at:%Y-%m-%d %H:%M}"
