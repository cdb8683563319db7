"""Where a learner stands in a practice round: plain Python over the round's questions and answers.

A round asks a lesson's eight questions, then each question missed on the first pass once more.
The first round follows the lesson's order; later ones ask first what memory needs most.
Nothing here reads or writes the database; `selectors.round_progress` loads a round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from practice import scheduling

if TYPE_CHECKING:
    from lessons.models import Question
    from practice.models import Review, Round


@dataclass
class RoundProgress:
    """Where a learner stands in a round: the questions in the order asked, and the answers."""

    questions: list[Question]
    round: Round | None = None
    reviews: list[Review] = field(default_factory=list)

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

    def missed_questions(self) -> list[Question]:
        """The questions the first pass missed, in the order asked."""
        first_pass = self.reviews[: len(self.questions)]
        by_id = {question.pk: question for question in self.questions}
        return [
            by_id[r.question_id] for r in first_pass if not r.correct and r.question_id in by_id
        ]

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


def question_order(
    questions: list[Question],
    memories: dict[int, tuple[scheduling.MemoryState, int]],
    now: datetime,
) -> list[Question]:
    """The order of a new round. The first (nothing remembered yet) follows the lesson; later
    ones ask what is due or was missed, least likely remembered first, then what was never
    answered, then the rest, weakest first. `memories`: (state, last rating) by question id."""
    if not memories:
        return list(questions)

    def rank(question: Question) -> tuple[int, float, int]:
        if question.pk not in memories:
            return (1, 0.0, question.position)
        state, last_rating = memories[question.pk]
        recall = scheduling.retrievability(state, now)
        needs_it = last_rating == scheduling.AGAIN or state.due <= now
        return (0 if needs_it else 2, recall, question.position)

    return sorted(questions, key=rank)


def in_stored_order(questions: list[Question], order: list[int] | None) -> list[Question]:
    """The questions in the order a round stored when it began (new questions last)."""
    if not order:
        return list(questions)
    place = {pk: index for index, pk in enumerate(order)}
    return sorted(questions, key=lambda q: (place.get(q.pk, len(place)), q.position))
