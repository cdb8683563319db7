"""Item-writing checks: cues an editor is warned about, on the admin page and in check_lessons."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lessons.item_checks import lesson_warnings, question_warnings
from lessons.models import Lesson, Question
from tests.factories import make_lesson

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


def choices(*texts: str, right: int = 0) -> list[dict]:
    """Choices with the given texts; the one at index `right` is correct."""
    return [
        {"text": text, "correct": index == right, "explanation": "" if index == right else "No."}
        for index, text in enumerate(texts)
    ]


CLEAN = choices("Pipeline parallelism", "Tensor parallelism", "Sharded data", "Replicas", right=0)
NOT_LONGEST = choices("Tiny", "A longer wrong choice", "Short", "Mid one", right=0)


def test_a_clean_question_has_no_warnings():
    assert question_warnings("Which strategy passes activations between stages?", CLEAN) == []


def test_a_right_answer_much_longer_than_every_wrong_one_is_flagged():
    long_right = choices(
        "Every replica must hold all 60 GB of parameters, more than a device has",
        "Eight devices are too few",
        "The all-reduce is slow",
        "Batches are too small",
    )
    [warning] = question_warnings("Why will this not work?", long_right)
    assert "The right answer is much the longest choice (71 characters" in warning
    assert "the longest wrong one has 25" in warning


def test_a_right_answer_only_a_little_longer_is_not_flagged():
    # 1.3 times as long but under 15 characters more: not a clear margin.
    near = choices("Pipeline stages", "Tensor split", "Replicas", "Shards", right=0)
    assert question_warnings("Which?", near) == []


def test_a_lesson_whose_right_answers_are_mostly_the_longest_is_flagged():
    longest_right = choices("The longest choice of all", "Short", "Shorter", "Tiny", right=0)
    questions = [Question(position=n, prompt="?", choices=longest_right) for n in (1, 2, 3)]
    questions.append(Question(position=4, prompt="?", choices=NOT_LONGEST))
    [warning] = lesson_warnings(questions)
    assert "The right answer is the longest choice in 3 of the 4 questions" in warning
    questions.append(Question(position=5, prompt="?", choices=NOT_LONGEST))
    questions.append(Question(position=6, prompt="?", choices=NOT_LONGEST))
    assert lesson_warnings(questions) == []  # 3 of 6 is not more than half


def test_numeric_questions_do_not_count_as_text_questions_for_the_lesson_pattern():
    numbers = choices("4 GB", "8 GB", "12 GB", "16 GB", right=3)  # the longest, but a number
    questions = [Question(position=n, prompt="?", choices=numbers) for n in range(1, 9)]
    assert lesson_warnings(questions) == []


def test_numbers_out_of_order_are_flagged_unless_the_order_is_kept():
    shuffled = choices("20%", "25%", "33%", "0%")
    [warning] = question_warnings("What share?", shuffled)
    assert "The choices are numbers but not in ascending order (20%, 25%, 33%, 0%)" in warning
    assert question_warnings("What share?", shuffled, keep_choice_order=True) == []
    assert question_warnings("What share?", choices("0%", "20%", "25%", "33%")) == []
    assert question_warnings("How much?", choices("1,000 tokens", "300 tokens", "2", "4")) == []


def test_absolute_words_only_in_wrong_choices_are_flagged():
    cued = choices(
        "Within each server",
        "Anywhere, since it sends nothing",
        "It makes no difference",
        "Across the servers",
    )
    [warning] = question_warnings("Where should tensor parallelism go?", cued)
    assert "Absolute words (“anywhere”, “no difference”, “nothing”)" in warning
    assert "appear only in wrong choices (B, C)" in warning
    cued[0]["text"] = "Always within each server"
    assert question_warnings("Where should tensor parallelism go?", cued) == []


def test_all_or_none_of_the_above_is_flagged():
    cued = choices("Broadcast", "Reduce", "Scatter", "None of the above", right=3)
    [warning] = question_warnings("Which collective?", cued)
    assert "Choice D says “… of the above”" in warning


def test_fewer_than_four_choices_is_flagged():
    [warning] = question_warnings("How much?", choices("6 GB", "48 GB", "384 GB"))
    assert "Only 3 choices: a blind guess is right 1 time in 3." in warning
    [warning] = question_warnings("Is it?", choices("Yes"))
    assert "Only 1 choice: there is nothing to choose between." in warning


def test_duplicate_choices_are_flagged_whatever_their_case_and_punctuation():
    cued = choices("Reduce", "All-reduce", "reduce.", "Broadcast")
    [warning] = question_warnings("Which collective?", cued)
    assert "Choices A and C say the same thing." in warning


def test_a_prompt_that_repeats_a_choice_word_for_word_is_flagged():
    cued = choices(
        "The whole batch is split",
        "Only the layers are split",
        "The optimiser state is copied",
        "Only the gradients",
    )
    prompt = "If the whole batch is split across devices, what must be sent?"
    [warning] = question_warnings(prompt, cued)
    assert "The prompt repeats the wording of choice A." in warning
    # Short choices (under four words) appear in prompts naturally and are not flagged.
    assert question_warnings("Is the reduce done?", CLEAN[:3] + choices("The reduce")) == []


def test_the_lesson_admin_page_lists_each_warning_by_question(editor_client):
    lesson = make_lesson()  # the factory's questions have 3 choices each
    question = lesson.questions.get(position=2)
    question.choices = choices("20%", "25%", "0%", "33%")
    question.save()
    html = editor_client.get(f"/admin/lessons/lesson/{lesson.pk}/change/").content.decode()
    assert "Item-writing checks" in html
    assert "they never stop a lesson being published" in html
    assert "<strong>Question 1:</strong> Only 3 choices: a blind guess is right 1 time" in html
    assert "<strong>Question 2:</strong> The choices are numbers but not in ascending" in html


def test_the_lesson_admin_page_shows_the_lesson_level_warning(editor_client):
    lesson = make_lesson(questions=0)
    for position in range(1, 9):
        Question.objects.create(
            lesson=lesson,
            position=position,
            prompt=f"Question {position}?",
            choices=choices("The right answer, long", "Wrong", "Wronger", "Wrongest"),
            explanation="Because.",
        )
    html = editor_client.get(f"/admin/lessons/lesson/{lesson.pk}/change/").content.decode()
    assert "<strong>The lesson:</strong> The right answer is the longest choice in 8 of" in html


def test_an_editor_pins_the_choice_order_and_the_warning_goes(editor_client):
    lesson = make_lesson(status=Lesson.Status.DRAFT)
    question = lesson.questions.get(position=1)
    question.choices = choices("20%", "25%", "0%", "33%")
    question.save()
    page = editor_client.get(f"/admin/lessons/question/{question.pk}/change/")
    assert "The choices are numbers but not in ascending order" in page.content.decode()
    data = {
        "position": "1",
        "prompt": question.prompt,
        "explanation": question.explanation,
        "keep_choice_order": "on",
    }
    for slot, choice in enumerate(question.choices):
        data[f"choice_{slot}_text"] = choice["text"]
        data[f"choice_{slot}_why"] = choice["explanation"]
    data["choice_0_correct"] = "on"
    response = editor_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    question.refresh_from_db()
    assert question.keep_choice_order
    html = editor_client.get(f"/admin/lessons/lesson/{lesson.pk}/change/").content.decode()
    assert "not in ascending order" not in html
    assert 'questions-0-keep_choice_order" checked' in html


def test_a_clean_lesson_says_so_on_its_admin_page(editor_client):
    lesson = make_lesson(questions=1)
    Question.objects.filter(lesson=lesson).update(choices=CLEAN)
    html = editor_client.get(f"/admin/lessons/lesson/{lesson.pk}/change/").content.decode()
    assert "No warnings." in html


def check_lessons(directory: Path) -> tuple[str, CommandError | None]:
    out = io.StringIO()
    try:
        call_command("check_lessons", str(directory), stdout=out)
    except CommandError as error:
        return out.getvalue(), error
    return out.getvalue(), None


def test_check_lessons_passes_the_demo_lessons():
    out, error = check_lessons(DEMO)
    assert error is None, out
    assert out == "Checked 3 lesson files: no warnings.\n"


def test_check_lessons_prints_each_planted_cue_and_fails(tmp_path):
    text = (DEMO / "mt__e-JwIxHek.md").read_text()
    question_3 = text.index("::: question 3 ")
    choice_a = text.index("::: choice A", question_3)
    end = text.index("\n::: ", choice_a + 5)
    planted = text[:end] + " (all of the above)" + text[end:]
    (tmp_path / "mt__e-JwIxHek.md").write_text(planted)
    out, error = check_lessons(tmp_path)
    assert error is not None and error.returncode == 1
    assert str(error) == "Checked 1 lesson file: 1 warning."
    assert out.startswith("mt__e-JwIxHek.md: question 3: Choice A says “… of the above”.")


def test_check_lessons_reads_files_without_touching_the_database(tmp_path):
    # No `db` fixture: any query would fail the test.
    (tmp_path / "lesson.md").write_text((DEMO / "mt_twcpO-945r.md").read_text())
    assert check_lessons(tmp_path)[1] is None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing", "is not a folder."),
        (lambda d: d, "holds no lesson files (*.md)."),
    ],
)
def test_check_lessons_explains_a_bad_folder(tmp_path, make, message):
    out, error = check_lessons(make(tmp_path))
    assert error is not None and error.returncode == 2
    assert message in str(error)


def test_check_lessons_explains_a_bad_file(tmp_path):
    text = (DEMO / "mt__e-JwIxHek.md").read_text()
    (tmp_path / "bad.md").write_text(text.replace("::: question 2 97600647", "::: question 2 x"))
    out, error = check_lessons(tmp_path)
    assert error is not None and error.returncode == 2
    assert "bad.md:96: question 2: an item's key is 1 to 16 hex digits" in str(error)


def test_keep_choice_order_goes_through_lesson_files_both_ways(tmp_path, db):
    lesson = make_lesson()
    lesson.questions.filter(position=2).update(keep_choice_order=True)
    call_command("export_lessons", str(tmp_path), stdout=io.StringIO())
    text = (tmp_path / f"{lesson.public_id}.md").read_text()
    key = lesson.questions.get(position=2).key
    assert f"::: question 2 {key} keep-choice-order\n" in text
    assert f"::: question 1 {lesson.questions.get(position=1).key}\n" in text
    lesson.questions.update(keep_choice_order=False)
    call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    pinned = dict(lesson.questions.values_list("position", "keep_choice_order"))
    assert pinned == {n: n == 2 for n in range(1, 9)}


def test_a_lesson_file_with_an_unknown_question_flag_is_refused(tmp_path, db):
    text = (DEMO / "mt__e-JwIxHek.md").read_text()
    (tmp_path / "a.md").write_text(
        text.replace("::: question 2 97600647", "::: question 2 97600647 pin")
    )
    with pytest.raises(CommandError, match="only `keep-choice-order` may follow, not 'pin'"):
        call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    assert not Lesson.objects.exists()
