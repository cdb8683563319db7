"""Reads for the practice pages, each in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.sessions.backends.base import SessionBase
from django.db.models import Q

from lessons.models import Lesson, Question
from practice import scheduling
from practice.models import Learner, Memory, Review, Round
from practice.services import SESSION_KEY

REVIEW_BATCH_SIZE = 8


def learner_for_session(session: SessionBase) -> Learner | None:
    """The browser's learner, if it has answered anything; never creates one."""
    public_id = session.get(SESSION_KEY)
    return Learner.objects.filter(public_id=public_id).first() if public_id else None


@dataclass
class RoundProgress:
    """Where a learner stands in a round: the questions in the order asked, and the answers."""

    questions: list[Question]
    round: Round | None = None
    reviews: list[Review] = field(default_factory=list)

    @property
    def queue(self) -> list[Question]:
        """The eight questions, then each question missed on the first pass, once."""
        first_pass = self.reviews[: len(self.questions)]
        by_id = {question.pk: question for question in self.questions}
        missed = [
            by_id[r.question_id] for r in first_pass if not r.correct and r.question_id in by_id
        ]
        return self.questions + missed

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

    def finished_after(self, correct: bool) -> bool:
        """Whether answering the current question (right or wrong) ends the round."""
        missed_now = not correct and self.step < len(self.questions)
        return self.step + 1 >= self.total + (1 if missed_now else 0)

    @property
    def first_pass_right(self) -> int:
        return sum(1 for review in self.reviews[: len(self.questions)] if review.correct)

    def results(self) -> list[dict]:
        """Per question: right first time, right on the retry, or still missed."""
        rows = []
        for question in self.questions:
            answers = [r for r in self.reviews if r.question_id == question.pk]
            rows.append(
                {
                    "question": question,
                    "first_right": bool(answers and answers[0].correct),
                    "retry_right": len(answers) > 1 and bool(answers[-1].correct),
                }
            )
        return rows


def round_progress(
    *, learner: Learner | None, lesson: Lesson, questions: list[Question], key: str | None = None
) -> RoundProgress:
    """The learner's round of this lesson with this key, or else their latest one."""
    progress = RoundProgress(questions=questions)
    if learner is None:
        return progress
    rounds = Round.objects.filter(learner=learner, lesson=lesson)
    rounds = rounds.filter(key=key) if key else rounds.order_by("-started_at", "-pk")
    progress.round = rounds.first()
    if progress.round is not None:
        progress.reviews = list(progress.round.review_set.order_by("round_step", "pk"))
    return progress


@dataclass
class DueItem:
    memory: Memory
    retrievability: float


def due_items(*, learner: Learner, now: datetime) -> list[DueItem]:
    """Everything due for the learner, least likely to be remembered first."""
    memories = (
        Memory.objects.due(now)
        .filter(learner=learner)
        .filter(Q(lesson__status=Lesson.Status.PUBLISHED))
        .select_related("lesson__subject", "question", "flashcard")
    )
    items = [
        DueItem(memory, scheduling.retrievability(memory.memory_state, now)) for memory in memories
    ]
    items.sort(key=lambda item: (item.retrievability, item.memory.due, item.memory.pk))
    return items


def next_due_at(*, learner: Learner, now: datetime) -> datetime | None:
    memory = (
        Memory.objects.filter(learner=learner, due__gt=now, lesson__status=Lesson.Status.PUBLISHED)
        .order_by("due")
        .only("due")
        .first()
    )
    return memory.due if memory else None


def export_document(*, learner: Learner | None, now: datetime) -> dict:
    """Everything stored for this browser, in the documented export format."""
    config = scheduling.SchedulerSettings.from_django()
    document = {
        "version": 1,
        "exported_at": _iso(now),
        "scheduler": config.as_dict(),
        "items": [],
    }
    if learner is None:
        return document
    memories = {
        (m.question_id, m.flashcard_id): m
        for m in Memory.objects.filter(learner=learner).select_related(
            "lesson", "question", "flashcard"
        )
    }
    reviews: dict[tuple, list[Review]] = {}
    for review in Review.objects.filter(learner=learner).select_related(
        "lesson", "question", "flashcard"
    ):
        reviews.setdefault((review.question_id, review.flashcard_id), []).append(review)
    for item_id in sorted(set(memories) | set(reviews), key=lambda k: (k[0] or 0, k[1] or 0)):
        memory = memories.get(item_id)
        item_reviews = reviews.get(item_id, [])
        sample = memory or item_reviews[0]
        document["items"].append(
            {
                "lesson": sample.lesson.public_id,
                "item": f"{sample.kind}:{sample.item.key}",
                "kind": str(sample.kind),
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
                    }
                    for review in item_reviews
                ],
            }
        )
    return document


def _iso(moment: datetime) -> str:
    return scheduling.utc(moment).isoformat().replace("+00:00", "Z")
