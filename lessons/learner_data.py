"""What content code may ask about learners' data, without importing the practice app.

Editors must be told before a change loses learners' data, so the content's services and admin
ask here: how many learners remember a question, how often items were answered, and to forget a
question whose right answer changed. The practice app answers (it registers itself when Django
starts, in `practice.apps`); without it no learner has data. This keeps one direction between
the apps: practice reads content, content never imports practice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lessons.models import Flashcard, Lesson, Question


class LearnerData(Protocol):
    def remembering(self, question: Question) -> int:
        """How many learners have a memory of the question."""
        ...

    def learners_of(self, lesson: Lesson) -> int:
        """How many learners have a memory of anything in the lesson."""
        ...

    def answers_to(self, items: Sequence[Question | Flashcard]) -> dict[int, tuple[int, int]]:
        """(answers, learners) by item id, for the items that have any."""
        ...

    def forget(self, question: Question) -> int:
        """Reset every learner's memory of the question (their answers stay); how many."""
        ...


class _NoLearners:
    def remembering(self, question: Question) -> int:
        return 0

    def learners_of(self, lesson: Lesson) -> int:
        return 0

    def answers_to(self, items: Sequence[Question | Flashcard]) -> dict[int, tuple[int, int]]:
        return {}

    def forget(self, question: Question) -> int:
        return 0


_provider: LearnerData = _NoLearners()


def register(provider: LearnerData) -> None:
    global _provider
    _provider = provider


def remembering(question: Question) -> int:
    return _provider.remembering(question)


def learners_of(lesson: Lesson) -> int:
    return _provider.learners_of(lesson)


def answers_to(items: Sequence[Question | Flashcard]) -> dict[int, tuple[int, int]]:
    return _provider.answers_to(items)


def forget(question: Question) -> int:
    return _provider.forget(question)
