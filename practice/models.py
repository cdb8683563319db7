"""What is kept for an anonymous learner: the learner, a memory of each item answered (its
scheduling state and its star's evidence), every answer (Review), rounds in progress, and
one-time transfer codes."""

from __future__ import annotations

import secrets
from dataclasses import astuple, dataclass, field
from datetime import datetime, timedelta
from typing import cast

from django.db import models
from django.db.models import Exists, OuterRef, Q, Subquery
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
    # Set while a progress file or a transfer code is merged into this learner: one merge at a
    # time keeps the review caps (practice.progress_file.merge).
    import_started_at = models.DateTimeField(null=True, blank=True)

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
    def item_ref(self) -> tuple[str, int]:
        """The item as memories are keyed: ("question", pk) or ("flashcard", pk)."""
        return self.kind, cast(int, self.question_id or self.flashcard_id)

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


def _answers_since(moment: datetime) -> models.QuerySet[Review]:
    """The answers, at or after `moment`, of the outer memory's learner to its item."""
    return Review.objects.filter(
        Q(question=OuterRef("question")) | Q(flashcard=OuterRef("flashcard")),
        learner=OuterRef("learner"),
        reviewed_at__gte=moment,
    )


class MemoryQuerySet(models.QuerySet["Memory"]):
    def due(self, now) -> MemoryQuerySet:
        return self.filter(due__lte=now)

    def in_published_lessons(self) -> MemoryQuerySet:
        """Memories of published lessons, found as "not in a draft": the drafts are few and
        their own index (lesson_unpublished) finds them at once, where joining every memory to
        its lesson read the lesson table once a memory."""
        return self.exclude(lesson__in=Lesson.objects.exclude(status=Lesson.Status.PUBLISHED))

    def with_answer_seen_since(self, moment: datetime) -> MemoryQuerySet:
        """Each memory with `answer_seen_at`: when its learner last answered the item (and so
        was shown its right answer), practice included, if at or after `moment`; else None."""
        answers = _answers_since(moment).order_by("-reviewed_at").values("reviewed_at")
        return self.annotate(answer_seen_at=Subquery(answers[:1]))

    def answer_not_seen_since(self, moment: datetime) -> MemoryQuerySet:
        """The memories whose item the learner has not answered since `moment`."""
        return self.exclude(Exists(_answers_since(moment)))


class Memory(LearnerItem):
    """The FSRS memory state of one learner for one item, in indexed columns."""

    state = models.PositiveSmallIntegerField(choices=list(scheduling.STATES.items()))
    step = models.PositiveSmallIntegerField(null=True, blank=True)
    stability = models.FloatField(null=True, blank=True)
    difficulty = models.FloatField(null=True, blank=True)
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    last_rating = models.PositiveSmallIntegerField(choices=list(scheduling.RATINGS.items()))
    # What the scheduled answers show (sky.Evidence): the star's level (unlit, kindled or lit),
    # the log-odds that the learner knows the item rather than guesses, the first right answer
    # of the current run, and whether the last scheduled answer was missed. Set where a
    # scheduled answer moves the memory on; practice answers never touch them.
    evidence = models.PositiveSmallIntegerField(
        choices=list(sky.EVIDENCE.items()), default=sky.NO_EVIDENCE, db_default=sky.NO_EVIDENCE
    )
    evidence_score = models.FloatField(default=0.0, db_default=0.0)
    streak_since = models.DateTimeField(null=True, blank=True)
    missed = models.BooleanField(default=False, db_default=False)
    answer_seen_at: datetime | None  # only where read with_answer_seen_since()
    # The first time the star was lit. Never cleared, so "stars ever lit" never goes down.
    lit_at = models.DateTimeField(null=True, blank=True)

    objects = MemoryQuerySet.as_manager()

    # The columns that hold a scheduling.MemoryState, in its order.
    STATE_FIELDS = ("state", "step", "stability", "difficulty", "due", "last_review")
    # In the order of sky.Evidence's fields.
    EVIDENCE_FIELDS = ("evidence", "evidence_score", "streak_since", "lit_at", "missed")

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
        """The state after a scheduled review; until its star is lit, the item comes back
        within sky.UNLIT_MAX_INTERVAL, for the answers that light it (set the evidence first)."""
        for name in self.STATE_FIELDS:
            setattr(self, name, getattr(memory, name))
        self.last_rating = rating
        self.due = sky.due_until_lit(self.due, self.last_review, self.evidence)

    @property
    def evidence_now(self) -> sky.Evidence:
        return sky.Evidence(*(getattr(self, name) for name in self.EVIDENCE_FIELDS))

    def record_evidence(self, outcome: sky.Outcome, *, guess_rate: float, now: datetime) -> None:
        """Move the evidence on by one scheduled answer (sky.Evidence.after)."""
        evidence = self.evidence_now.after(outcome, guess_rate=guess_rate, now=now)
        for name, value in zip(self.EVIDENCE_FIELDS, astuple(evidence), strict=True):
            setattr(self, name, value)


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
    # What this answer did to its item's star: kindled it, lit it, put it out (unlit) or none
    # of those (""), for the verdict and for the end of a sitting to say what it changed.
    star_change = models.CharField(max_length=7, blank=True, default="", db_default="")
    # What lighting the star still takes after this scheduled answer, for its verdict: how many
    # more right answers in a row (sky.answers_to_light), and, once a run of right answers has
    # begun, the moment from which the last of them can light it (sky.lights_from). None once
    # it is lit, and for practice and imported answers.
    answers_to_light = models.PositiveSmallIntegerField(null=True, blank=True)
    lights_from = models.DateTimeField(null=True, blank=True)
    # When /review asks the item again after this answer (its due, and never within the
    # sitting), so that the verdict names the day the item is due, not only the moment it could
    # first light. None for practice and imported answers, and for answers before it was kept.
    comes_back_at = models.DateTimeField(null=True, blank=True)
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

    @property
    def says_what_comes_next(self) -> bool:
        """Whether its verdict can say what lights the star or when the item is due
        (practice and imported answers have neither)."""
        return bool(self.answers_to_light or self.comes_back_at)

    @property
    def lights_later_from(self) -> datetime | None:
        """When the last answer that lights its star may come, if later than when the item
        comes back (what the verdict says first), and later than this answer."""
        if self.lights_from and self.lights_from > (self.comes_back_at or self.reviewed_at):
            return self.lights_from
        return None

    @property
    def lights_not_before(self) -> datetime | None:
        """The moment its verdict names as when the star can light: lights_later_from, or, when
        one more right answer lights it, the moment before which that answer cannot, so that a
        learner who practises sooner is not promised what the answer will not do. Never within
        the hour after this answer, when answering again is practice (sky.SITTING)."""
        if self.answers_to_light == 1 and self.lights_from and self.lights_from > self.reviewed_at:
            return max(self.lights_from, self.reviewed_at + sky.SITTING)
        return self.lights_later_from

    def in_sitting(self, now: datetime) -> bool:
        """Given within the last sitting (sky.SITTING), so a page may still speak of it."""
        return now - self.reviewed_at <= sky.SITTING

    @property
    def declared_guess(self) -> bool:
        """A scheduled right answer the learner marked "I guessed" (sky.outcome_of's GUESSED)."""
        outcome = sky.outcome_of(self.rating, self.correct)
        return not self.practice and outcome == sky.Outcome.GUESSED


# A round left unfinished is taken up again for a day; after that, its questions start anew.
ROUND_KEPT = timedelta(days=1)

# Where a learner stands in a practice round: plain Python over the round's questions and
# answers. A round asks a lesson's eight questions, then each question missed on the first pass
# once more. The first round follows the lesson's order; later ones ask first what memory needs
# most.


@dataclass
class RoundProgress:
    """Where a learner stands in a round: the questions in the order asked, and the answers."""

    questions: list[Question]
    round: Round | None = None
    reviews: list[Review] = field(default_factory=list)

    @classmethod
    def load(
        cls,
        *,
        learner: Learner | None,
        lesson: Lesson,
        questions: list[Question],
        key: str | None = None,
    ) -> RoundProgress:
        """The learner's round of this lesson with this key, or else their latest one, with its
        answers, in one query: a round is stored with its first answer, so its answers find it."""
        progress = cls(questions=questions)
        if learner is None:
            return progress
        if key:
            chosen = Q(round__learner_id=learner.pk, round__key=key, round__lesson_id=lesson.pk)
        else:
            latest = Round.objects.filter(learner_id=learner.pk, lesson_id=lesson.pk).order_by(
                "-started_at", "-pk"
            )
            chosen = Q(round=Subquery(latest.values("pk")[:1]))
        reviews = list(Review.objects.filter(chosen).select_related("round").order_by())
        if not reviews:
            return progress
        progress.round = round_ = cast(Round, reviews[0].round)  # each review found has its round
        for review in sorted(reviews, key=_in_round_order):
            review.round = round_
            progress.reviews.append(review)
        progress.questions = in_stored_order(progress.questions, round_.question_order)
        return progress

    @property
    def queue(self) -> list[Question]:
        """The eight questions, then each question missed on the first pass, once."""
        return self.questions + self.missed_questions()

    @property
    def step(self) -> int:
        return len(self.reviews)

    @property
    def total(self) -> int:
        return len(self.queue)

    @property
    def current(self) -> Question | None:
        queue = self.queue
        return queue[self.step] if self.step < len(queue) else None

    @property
    def finished(self) -> bool:
        return self.round is not None and self.current is None

    def left(self, now: datetime) -> bool:
        """A round not finished whose last answer is over ROUND_KEPT old: the learner left it,
        and the lesson's questions start a new round (the left round's answers still count)."""
        return (
            bool(self.reviews)
            and not self.finished
            and now - max(review.reviewed_at for review in self.reviews) > ROUND_KEPT
        )

    def first_showing(self, question: Question) -> str | None:
        """The attempt that asked this question on the round's first pass, if it was answered:
        the retry shows its choices in another order."""
        first_pass = self.reviews[: len(self.questions)]
        return next((r.attempt for r in first_pass if r.question_id == question.pk), None)

    def finished_after(self, correct: bool) -> bool:
        """Whether answering the current question (right or wrong) ends the round."""
        missed_now = not correct and self.step < len(self.questions)
        return self.step + 1 >= self.total + (1 if missed_now else 0)

    @property
    def first_pass_done(self) -> int:
        """How many of the lesson's questions are answered: the round's count never grows."""
        return min(self.step, len(self.questions))

    @property
    def retries_left(self) -> int:
        """Missed questions still to be asked again at the end."""
        return self.total - max(self.step, len(self.questions))

    @property
    def retrying(self) -> bool:
        return self.step >= len(self.questions)

    @property
    def first_pass_right(self) -> int:
        return sum(1 for review in self.reviews[: len(self.questions)] if review.correct)

    @property
    def first_pass_guessed(self) -> int:
        """Of the first pass's right answers, those the learner said they guessed."""
        return sum(1 for row in self.results() if row["guessed"])

    def missed_questions(self) -> list[Question]:
        """The questions the first pass missed, in the order asked."""
        first_pass = self.reviews[: len(self.questions)]
        by_id = {question.pk: question for question in self.questions}
        return [
            by_id[r.question_id] for r in first_pass if not r.correct and r.question_id in by_id
        ]

    def results(self) -> list[dict]:
        """Per question: right first time (or by a declared guess), right on the retry, or
        still missed; and whether its first answer was practice, which changed no star."""
        rows = []
        for question in self.questions:
            answers = [r for r in self.reviews if r.question_id == question.pk]
            first_right = bool(answers and answers[0].correct)
            rows.append(
                {
                    "question": question,
                    "first_right": first_right,
                    "guessed": first_right
                    and sky.outcome_of(answers[0].rating, True) == sky.Outcome.GUESSED,
                    "retry_right": len(answers) > 1 and bool(answers[-1].correct),
                    "practice": bool(answers and answers[0].practice),
                }
            )
        return rows


def question_order(
    questions: list[Question],
    memories: dict[int, tuple[scheduling.MemoryState, bool]],
    now: datetime,
) -> list[Question]:
    """The order of a new round. The first (nothing remembered yet) follows the lesson; later
    ones ask what is due or was missed, least likely remembered first, then what was never
    answered, then the rest, weakest first. `memories`: (state, missed) by question id."""
    if not memories:
        return list(questions)

    def rank(question: Question) -> tuple[int, float, int]:
        if question.pk not in memories:
            return (1, 0.0, question.position)
        state, missed = memories[question.pk]
        recall = scheduling.retrievability(state, now)
        needs_it = missed or state.due <= now
        return (0 if needs_it else 2, recall, question.position)

    return sorted(questions, key=rank)


def in_stored_order(questions: list[Question], order: list[int] | None) -> list[Question]:
    """The questions in the order a round stored when it began (new questions last)."""
    if not order:
        return list(questions)
    place = {pk: index for index, pk in enumerate(order)}
    return sorted(questions, key=lambda q: (place.get(q.pk, len(place)), q.position))


def _in_round_order(review: Review) -> tuple[bool, int, int]:
    return review.round_step is None, review.round_step or 0, review.pk


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
