"""The lesson's admin page says how learners do on each question and flashcard, and what to fix."""

from __future__ import annotations

from django.test import Client
from django.utils import timezone

from practice import analytics
from practice.models import Learner, Review
from tests.practice.helpers import finish_round


def first_answer(learner, question, choice, *, duration_ms=4000, practice=False, n=0) -> Review:
    return Review(
        learner=learner,
        lesson=question.lesson,
        question=question,
        attempt=f"{question.pk}-{n}-{practice}",
        rating=3 if choice["correct"] else 1,
        reviewed_at=timezone.now(),
        duration_ms=duration_ms,
        answer=choice["id"],
        correct=choice["correct"],
        practice=practice,
        answer_kind=Review.Kind.LATER if practice else Review.Kind.FIRST,
    )


def test_first_attempts_only_count_and_retries_do_not(demo, editor_client):  # noqa: F811
    for pattern in ([True] * 8, [False] + [True] * 7 + [True], [False] + [True] * 7 + [False]):
        finish_round(Client(), demo, pattern)
    assert Review.objects.filter(practice=True).count() == 2  # the retries of question 1
    rows = analytics.lesson_question_rows(demo)
    first = rows[0]
    assert (first.learners, first.right) == (3, 1)
    assert sum(c.count for c in first.choices) == 3  # one first answer each, no retries
    assert [c.count for c in first.choices if c.correct] == [1]
    assert first.flags == []  # too few learners to flag
    html = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    assert "How learners do" in html and "33% of 3" in html
    assert "Flags from 20 learners" in html


def test_plain_word_flags_once_twenty_learners_answered(demo, editor_client):  # noqa: F811
    easy, misleading = demo.questions.get(position=1), demo.questions.get(position=2)
    right = next(c for c in easy.labelled_choices if c["correct"])
    lure = next(c for c in misleading.labelled_choices if not c["correct"])
    key = next(c for c in misleading.labelled_choices if c["correct"])
    reviews = []
    for n in range(20):
        learner = Learner.objects.create()
        reviews.append(first_answer(learner, easy, right, n=n))
        reviews.append(first_answer(learner, misleading, lure if n < 12 else key, n=n))
        reviews.append(first_answer(learner, easy, right, practice=True, n=n))
    Review.objects.bulk_create(reviews)
    rows = {row.question.position: row for row in analytics.lesson_question_rows(demo)}
    assert rows[1].learners == 20 and rows[1].right_share == 1
    assert "Too easy: nearly everyone gets it right first time." in rows[1].flags
    never = [c.letter for c in rows[1].choices if not c.correct]
    for letter in never:
        assert f"Choice {letter} is never chosen: replace it with a likelier one." in rows[1].flags
    assert (
        f"Choice {lure['letter']} is chosen more than the right answer: check the key or the "
        "teaching." in rows[2].flags
    )
    assert rows[1].median_seconds == 4.0
    html = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    assert "Too easy: nearly everyone gets it right first time." in html


def test_discrimination_is_high_when_the_strong_learners_get_it_right(demo):
    questions = list(demo.questions.all())
    reviews = []
    for n in range(10):
        learner = Learner.objects.create()
        strong = n < 5
        for question in questions:
            right = next(c for c in question.choices if c["correct"])
            wrong = next(c for c in question.choices if not c["correct"])
            reviews.append(first_answer(learner, question, right if strong else wrong, n=n))
    Review.objects.bulk_create(reviews)
    rows = analytics.lesson_question_rows(demo)
    assert all(row.discrimination is not None and row.discrimination > 0.9 for row in rows)


def test_flashcards_show_their_share_of_again_and_easy(demo):
    card = demo.flashcards.first()
    learner = Learner.objects.create()
    Review.objects.bulk_create(
        Review(
            learner=learner,
            lesson=demo,
            flashcard=card,
            attempt=f"card-{n}",
            rating=rating,
            reviewed_at=timezone.now(),
        )
        for n, rating in enumerate((1, 1, 3, 4))
    )
    row = next(r for r in analytics.lesson_flashcard_rows(demo) if r.position == card.position)
    assert (row.ratings, row.again_share, row.easy_share) == (4, 0.5, 0.25)
