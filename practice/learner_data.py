"""The practice app's answers to what content code asks about learners (lessons.learner_data)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count

from lessons.models import Flashcard, Lesson, Question
from practice.models import Memory, Review
from practice.services import question_memories_reset


class PracticeLearnerData:
    def remembering(self, question: Question) -> int:
        return Memory.objects.filter(question=question).count()

    def learners_of(self, lesson: Lesson) -> int:
        return Memory.objects.filter(lesson=lesson).values("learner_id").distinct().count()

    def answers_to(self, items: Sequence[Question | Flashcard]) -> dict[int, tuple[int, int]]:
        if not items:
            return {}
        field = "question" if isinstance(items[0], Question) else "flashcard"
        rows = (
            Review.objects.filter(**{f"{field}__in": items})
            .values(f"{field}_id")
            .annotate(answers=Count("pk"), learners=Count("learner_id", distinct=True))
        )
        return {row[f"{field}_id"]: (row["answers"], row["learners"]) for row in rows}

    def forget(self, question: Question) -> int:
        return question_memories_reset(question=question)
