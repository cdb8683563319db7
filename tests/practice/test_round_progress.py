"""A round's progress is plain Python: these tests build unsaved objects and touch no database."""

from __future__ import annotations

from lessons.models import Question
from practice import scheduling
from practice.models import Review, Round, RoundProgress

QUESTIONS = [Question(pk=number, position=number) for number in range(1, 9)]


def answered(*right: bool) -> RoundProgress:
    progress = RoundProgress(questions=QUESTIONS, round=Round(key="r"))
    queue = progress.queue
    for step, correct in enumerate(right):
        progress.reviews.append(
            Review(
                question_id=queue[step].pk,
                correct=correct,
                rating=scheduling.GOOD if correct else scheduling.AGAIN,
                round_step=step,
            )
        )
        queue = progress.queue
    return progress


def test_a_new_round_asks_the_eight_questions_in_order():
    progress = RoundProgress(questions=QUESTIONS)
    assert progress.current == QUESTIONS[0]
    assert progress.total == 8
    assert not progress.finished


def test_a_question_missed_on_the_first_pass_comes_back_once_at_the_end():
    progress = answered(True, False, *[True] * 6)
    assert progress.total == 9
    assert progress.current == QUESTIONS[1]
    progress = answered(True, False, *[True] * 6, False)
    assert progress.finished
    assert progress.first_pass_right == 7
    rows = progress.results()
    assert [row["first_right"] for row in rows] == [True, False, *[True] * 6]
    assert rows[1]["retry_right"] is False


def test_the_answer_that_ends_the_round_is_known_before_it_is_recorded():
    almost = answered(*[True] * 7)
    assert almost.finished_after(True)
    assert not almost.finished_after(False)  # a miss on the first pass comes back
    retrying = answered(False, *[True] * 7)
    assert retrying.finished_after(False) and retrying.finished_after(True)
