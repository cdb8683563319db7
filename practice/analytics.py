"""How learners do on a lesson, for its editors: per question and per flashcard.

Only evidence counts: answers given on this site by learners (not imported from a progress
file, nor staff previews: see Review.Origin) that are not practice (a round's retry after the
answer was shown), and for questions only each learner's first answer, so the figures say what
learners knew before the lesson taught them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from django.db.models import Avg, Case, Count, FloatField, OuterRef, Subquery, When
from django.db.models.functions import Coalesce

from lessons.models import Lesson, Question
from practice.models import Memory, Review

# Below this many learners a share moves too much from one learner to the next to act on.
FLAG_FROM_LEARNERS = 20
TOO_EASY = 0.9
TOO_HARD = 0.3


@dataclass
class ChoiceShare:
    letter: str
    text: str
    correct: bool
    count: int
    share: float


@dataclass
class QuestionRow:
    question: Question
    learners: int
    right: int
    choices: list[ChoiceShare]
    median_seconds: float | None
    discrimination: float | None
    flags: list[str] = field(default_factory=list)

    @property
    def right_share(self) -> float | None:
        return self.right / self.learners if self.learners else None


@dataclass
class FlashcardRow:
    position: int
    front: str
    ratings: int
    again_share: float | None
    easy_share: float | None


def lesson_question_rows(lesson: Lesson) -> list[QuestionRow]:
    """One row per question of the lesson, in two queries whatever the number of answers."""
    questions = list(lesson.questions.all())
    firsts = Review.objects.filter(
        lesson=lesson,
        question__isnull=False,
        origin=Review.Origin.ANSWERED,
        practice=False,
        answer_kind=Review.Kind.FIRST,
    ).values_list("learner_id", "question_id", "answer", "correct", "duration_ms")
    by_question: dict[int, list[tuple]] = {q.pk: [] for q in questions}
    score: dict[int, int] = {}  # each learner's right first answers across the lesson
    for learner_id, question_id, answer, correct, duration in firsts:
        if question_id in by_question:
            by_question[question_id].append((learner_id, answer, bool(correct), duration))
            score[learner_id] = score.get(learner_id, 0) + bool(correct)
    return [_row(question, by_question[question.pk], score) for question in questions]


def _row(question: Question, answers: list[tuple], score: dict[int, int]) -> QuestionRow:
    learners = len(answers)
    picks: dict[str, int] = {}
    for _, answer, _, _ in answers:
        for choice_id in filter(None, answer.split(",")):
            picks[choice_id] = picks.get(choice_id, 0) + 1
    choices = [
        ChoiceShare(
            c["letter"],
            c["text"],
            c["correct"],
            picks.get(c.get("id", ""), 0),
            picks.get(c.get("id", ""), 0) / learners if learners else 0.0,
        )
        for c in question.labelled_choices
    ]
    durations = [d for _, _, _, d in answers if d]
    row = QuestionRow(
        question=question,
        learners=learners,
        right=sum(1 for _, _, correct, _ in answers if correct),
        choices=choices,
        median_seconds=statistics.median(durations) / 1000 if durations else None,
        discrimination=_point_biserial(answers, score),
    )
    row.flags = _flags(row)
    return row


def _point_biserial(answers: list[tuple], score: dict[int, int]) -> float | None:
    """How much more the learners who got this question right did on the lesson's other
    questions than those who missed it (the point-biserial correlation, -1 to 1)."""
    rest = [(correct, score[learner] - correct) for learner, _, correct, _ in answers]
    right = [others for correct, others in rest if correct]
    wrong = [others for correct, others in rest if not correct]
    if not right or not wrong:
        return None
    spread = statistics.pstdev([others for _, others in rest])
    if not spread:
        return None
    p = len(right) / len(rest)
    mean_gap = statistics.fmean(right) - statistics.fmean(wrong)
    return mean_gap / spread * (p * (1 - p)) ** 0.5


def _flags(row: QuestionRow) -> list[str]:
    """What an editor should look at, in plain words, once enough learners answered."""
    if row.learners < FLAG_FROM_LEARNERS or row.right_share is None:
        return []
    flags = []
    if row.right_share >= TOO_EASY:
        flags.append("Too easy: nearly everyone gets it right first time.")
    elif row.right_share < TOO_HARD:
        flags.append("Too hard: most learners miss it; check the teaching or the question.")
    most_right = max((c.count for c in row.choices if c.correct), default=0)
    for choice in row.choices:
        if choice.correct:
            continue
        if choice.count == 0:
            flags.append(f"Choice {choice.letter} is never chosen: replace it with a likelier one.")
        elif choice.count > most_right:
            flags.append(
                f"Choice {choice.letter} is chosen more than the right answer: check the key "
                "or the teaching."
            )
    if row.discrimination is not None and row.discrimination < 0:
        flags.append(
            "Learners who do well on the rest of the lesson miss it more often than others: "
            "check that its right answer is right."
        )
    return flags


def lesson_flashcard_rows(lesson: Lesson) -> list[FlashcardRow]:
    """Each flashcard's share of Again and Easy ratings, in two queries."""
    counts: dict[tuple[int, int], int] = {}
    for card_id, rating, n in (
        Review.objects.filter(
            lesson=lesson,
            flashcard__isnull=False,
            origin=Review.Origin.ANSWERED,
            practice=False,
        )
        .values_list("flashcard_id", "rating")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        counts[(card_id, rating)] = n
    rows = []
    for card in lesson.flashcards.all():
        total = sum(n for (card_id, _), n in counts.items() if card_id == card.pk)
        rows.append(
            FlashcardRow(
                position=card.position,
                front=card.front,
                ratings=total,
                again_share=counts.get((card.pk, 1), 0) / total if total else None,
                easy_share=counts.get((card.pk, 4), 0) / total if total else None,
            )
        )
    return rows


# Per-question figures for the admin's question list -------------------------------------------


def question_stats() -> dict:
    """Annotations for a Question queryset: how learners do on each question, in SQL.

    Only learners' answers given on this site count (never imported ones or staff previews, nor
    a round's retry after the right answer was shown), and each figure reads one range
    of one index (see Review.answer_kind), whatever the number of reviews. attempts: every graded
    answer; learners: learners who answered it; right_first_share: the share of them whose first
    answer was right; lapses: wrong answers given right after a right one (a learned question
    forgotten); mean_difficulty: the mean FSRS difficulty of its memory states.
    """
    answers = (
        Review.objects.filter(
            question=OuterRef("pk"), origin=Review.Origin.ANSWERED, practice=False
        )
        .order_by()
        .values("question")
    )
    firsts = answers.filter(answer_kind=Review.Kind.FIRST)

    def per_question(queryset, aggregate) -> Subquery:
        return Subquery(queryset.annotate(value=aggregate).values("value")[:1])

    return {
        "attempts": Coalesce(per_question(answers, Count("*")), 0),
        "learners": Coalesce(per_question(firsts, Count("*")), 0),
        "right_first_share": per_question(
            firsts, Avg(Case(When(correct=True, then=1.0), default=0.0, output_field=FloatField()))
        ),
        "lapses": Coalesce(
            per_question(answers.filter(answer_kind=Review.Kind.LAPSE), Count("*")), 0
        ),
        "mean_difficulty": per_question(
            Memory.objects.filter(question=OuterRef("pk")).order_by().values("question"),
            Avg("difficulty"),
        ),
    }


def choice_picks(question: Question) -> list[dict]:
    """How often learners picked each of a question's choices."""
    counts: dict[str, int] = {}
    for answer, n in (
        Review.objects.filter(question=question, origin=Review.Origin.ANSWERED, practice=False)
        .values_list("answer")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        for choice_id in filter(None, answer.split(",")):
            counts[choice_id] = counts.get(choice_id, 0) + n
    return [choice | {"picks": counts.get(choice["id"], 0)} for choice in question.labelled_choices]
