"""Importing lesson files without losing learner data, and checking them before anything changes."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from lessons.models import Flashcard, Lesson, Question, Subject
from practice.models import Memory, Review
from tests.lessons.test_admin import change_page_data
from tests.practice.helpers import answer, rate_every_card


def export(directory: Path) -> Path:
    call_command("export_lessons", str(directory), stdout=io.StringIO())
    return directory


def import_lessons(directory: Path, *options: str) -> str:
    out = io.StringIO()
    call_command("import_lessons", str(directory), *options, stdout=out)
    return out.getvalue()


def refused(directory: Path, *options: str) -> str:
    """What a refused import printed (its plan, if it got that far) and its error."""
    out = io.StringIO()
    with pytest.raises(CommandError) as error:
        call_command("import_lessons", str(directory), *options, stdout=out)
    return out.getvalue() + str(error.value)


def seed_file(directory: Path, demo: Lesson) -> Path:
    return directory / f"{demo.public_id}.md"


def test_an_answered_question_missing_from_its_file_is_asked_about_first(demo, tmp_path):
    answer(Client(), demo, right=True)  # the first round asks question 1 first
    first = demo.questions.get(position=1)
    path = seed_file(export(tmp_path), demo)
    path.write_text(
        path.read_text().replace(f"::: question 1 {first.key}", "::: question 1 abc123")
    )
    message = refused(tmp_path)
    assert re.search(
        rf"{path.name}:\d+: question 1: the new question replaces “.*” \(key {first.key}\), "
        r"which has 1 answer from 1 learner: retire it \(its answers stay with it\) or delete "
        r"it\?",
        message,
    ), message
    assert "Nothing was written" in message and "--allow-retire or --allow-delete" in message
    assert Question.objects.filter(pk=first.pk).exists() and Review.objects.count() == 1

    out = import_lessons(tmp_path, "--allow-delete")
    assert f"(key {first.key}), which was deleted with 1 answer from 1 learner" in out
    assert not Question.everything.filter(pk=first.pk).exists()
    assert demo.questions.get(position=1).key == "abc123"


def test_a_new_question_written_without_a_key_never_takes_over_an_answered_one(demo, tmp_path):
    """The editors' review, D1: a new question 7 written in the file without a key, in place
    of the answered one, took its memories, answers and choice statistics."""
    client = Client()
    for _ in range(7):
        answer(client, demo, right=True)
    seventh = demo.questions.get(position=7)
    assert Memory.objects.filter(question=seventh).count() == 1
    path = seed_file(export(tmp_path), demo)
    text = path.read_text()
    start = text.index(f"::: question 7 {seventh.key}")
    end = text.index("::: question 8 ")
    new_question = (
        "::: question 7\nWhat does a token in a token bucket stand for?\n\n"
        "::: choice A right\nPermission to send one request\n\n"
        "::: choice B wrong\nOne second of waiting\n\n::: why B\nTime refills tokens.\n\n"
        "::: explanation\nEach token lets one request through.\n\n"
    )
    path.write_text(text[:start] + new_question + text[end:])

    plan = import_lessons(tmp_path, "--check")
    assert re.search(
        rf":\d+: question 7: the new question replaces “.*” \(key {seventh.key}\), which has 1 "
        r"answer from 1 learner: retire it",
        plan,
    ), plan
    assert "question 7: a new question will be created" in plan
    assert "An import will ask about 1 of these" in plan
    assert "Check passed. Lessons: 0 created, 1 updated, 2 unchanged." in plan

    out = import_lessons(tmp_path, "--allow-retire")
    assert f"(key {seventh.key}), which was retired, keeping its 1 answer from 1 learner" in out
    new = demo.questions.get(position=7)
    assert new.pk != seventh.pk and new.prompt.startswith("What does a token")
    old = Question.everything.get(pk=seventh.pk)
    assert old.retired_at is not None and old.position == 7
    assert Review.objects.filter(question=old).count() == 1  # the answer stays with it
    assert not Review.objects.filter(question=new).exists()
    assert not Memory.objects.filter(question=old).exists()  # its memory ended
    assert demo.questions.count() == 8 and Lesson.objects.get(pk=demo.pk).is_published


def test_reordered_choices_with_a_typo_keep_the_right_answer_and_learners_memory(demo, tmp_path):
    """The editors' review, D3: swapping two choices' blocks and fixing a typo in the right one
    is not a new right answer, so nothing is reset and nothing asked."""
    answer(Client(), demo, right=True)
    first = demo.questions.get(position=1)
    right_id = next(iter(first.correct_ids))
    path = seed_file(export(tmp_path), demo)
    text = path.read_text()
    start = text.index(f"::: question 1 {first.key}")
    end = text.index("::: explanation", start)
    blocks = text[start:end].split("\n::: choice ")
    head, choices = blocks[0], blocks[1:]
    choices[0], choices[1] = choices[1], choices[0]
    letters = "ABCDEF"
    choices = [letters[n] + choice[1:] for n, choice in enumerate(choices)]
    choices = [re.sub(r"(right \w+\n)(.*)\n", r"\1\2 (typo fixed)\n", c, count=1) for c in choices]
    moved = head + "".join("\n::: choice " + c for c in choices)
    moved = re.sub(r"::: why ([A-F])\n", lambda m: "::: why @\n", moved)
    # each why follows its own choice again, under the new letters
    parts = moved.split("\n::: choice ")
    parts = [parts[0]] + [p.replace("::: why @", f"::: why {p[0]}") for p in parts[1:]]
    path.write_text(text[:start] + "\n::: choice ".join(parts) + text[end:])
    out = import_lessons(tmp_path)
    assert "choices reordered" in out and "reworded" in out, out
    assert "right answer" not in out
    first.refresh_from_db()
    assert first.correct_ids == {right_id}
    assert Memory.objects.filter(question=first).count() == 1


def test_every_lesson_an_import_changes_is_in_the_admin_history(demo, tmp_path):
    path = seed_file(export(tmp_path), demo)
    path.write_text(path.read_text().replace(demo.heading, "A better heading"))
    import_lessons(tmp_path)
    entries = LogEntry.objects.filter(object_id=str(demo.pk), action_flag=CHANGE)
    assert [(e.action_flag, e.user.username) for e in entries] == [(CHANGE, "lesson-files")]
    assert entries[0].change_message.startswith("Imported from the lesson file")
    assert not LogEntry.objects.exclude(object_id=str(demo.pk)).filter(action_flag=CHANGE)


def swap_verdicts(text: str, first: str, second: str) -> str:
    """Make choice `second` of question 1 right and `first` wrong, in the file's first question,
    with the "why wrong" a published lesson needs for the newly wrong choice."""
    head, question_1, rest = text.partition("::: question 1 ")
    body, sep, tail = rest.partition("::: question 2 ")
    start = body.index(f"::: choice {first} right")
    end = body.index("\n::: ", start)
    if not body.startswith(f"\n::: why {first}\n", end):
        body = body[:end] + f"\n::: why {first}\nNot the answer any more.\n" + body[end:]
    body = body.replace(f"::: choice {first} right", f"::: choice {first} wrong")
    body = body.replace(f"::: choice {second} wrong", f"::: choice {second} right")
    return head + question_1 + body + sep + tail


def test_an_import_resets_memory_only_when_the_right_answer_really_changes(demo, tmp_path):
    answer(Client(), demo, right=True)
    first = demo.questions.get(position=1)
    right = first.correct_letters[0]
    path = seed_file(export(tmp_path), demo)
    original = path.read_text()
    # Reworded right answer (a punctuation fix): the same choice, memory kept.
    right_text = next(c["text"] for c in first.labelled_choices if c["correct"])
    path.write_text(original.replace(f"\n{right_text}\n", f"\n{right_text}!\n", 1))
    out = import_lessons(tmp_path)
    assert "right answer" not in out and Memory.objects.count() == 1
    assert re.search(r":\d+: question 1: changed: choice [A-F] reworded", out), out

    path.write_text(swap_verdicts(path.read_text(), right, "C" if right != "C" else "B"))
    asked = refused(tmp_path)  # not a tty: the import asks by refusing, with its plan
    assert re.search(
        r":\d+: question 1: the right answer changes from “.*” to “.*”; 1 learner remembers it: "
        r"reset or keep their memory\?",
        asked,
    ), asked
    assert "--reset-memories or --keep-memories" in asked and Memory.objects.count() == 1
    out = import_lessons(tmp_path, "--reset-memories")
    assert re.search(
        r":\d+: question 1: the right answer changes from .*; 1 learner's memory of it reset", out
    ), out
    assert Memory.objects.filter(question=first).count() == 0
    assert Review.objects.filter(question=first).count() == 1


def test_check_reports_every_slip_with_its_line_and_writes_nothing(demo, tmp_path):
    path = seed_file(export(tmp_path), demo)
    lines = path.read_text().split("\n")
    q1 = next(line for line in lines if line.startswith("::: question 1 "))
    q2 = next(line for line in lines if line.startswith("::: question 2 "))
    q3 = next(line for line in lines if line.startswith("::: question 3 "))
    text = "\n".join(lines)
    text = text.replace("::: heading", "::: heading\nA new heading", 1)
    text = text.replace(q2, f"::: question 2 {q1.split()[3]}")  # a duplicate key
    # question 3: its choices lettered A, C, … and the whys of B grouped after the choices
    start = text.index(q3)
    end = text.index("::: explanation", start)
    block = text[start:end].replace("::: choice B ", "::: choice C ", 1)
    text = text[:start] + block + "::: why B\nMisplaced.\n\n" + text[end:]
    start, end = text.index(q1), text.index("::: question 2 ")
    text = (
        text[:start]
        + re.sub(r"(::: choice [A-F]) right", r"\1 wrong", text[start:end])
        + text[end:]
    )
    text = text.replace("::: tip", "::: tipp", 1)
    path.write_text(text)
    with pytest.raises(CommandError) as error:
        import_lessons(tmp_path, "--check")
    report = str(error.value)
    name = path.name
    new_lines = text.split("\n")
    at = {line: n for n, line in reversed(list(enumerate(new_lines, start=1)))}
    why_b = text[: text.index("::: why B\nMisplaced")].count("\n") + 1
    assert f"{name}:{at['::: tipp']}: block: unknown block `::: tipp`" in report
    assert (
        f"{name}:{at[f'::: question 2 {q1.split()[3]}']}: question 2: key {q1.split()[3]}" in report
    )
    assert re.search(
        rf"{name}:\d+: choice C: choice letters run A, B, C… in order: "
        "this is choice B of question 3",
        report,
    )
    assert f"{name}:{why_b}: why B: a `why B` block must follow choice B directly" in report
    assert f"{name}:{at[q1]}: question 1: no choice is marked right" in report
    assert "nothing was written" in report
    assert Lesson.objects.get(pk=demo.pk).heading == demo.heading


def test_check_of_a_good_file_says_what_would_change_and_writes_nothing(demo, tmp_path):
    path = seed_file(export(tmp_path), demo)
    path.write_text(path.read_text().replace(demo.heading, "A better heading"))
    logged = LogEntry.objects.count()
    out = import_lessons(tmp_path, "--check")
    assert f"{demo.public_id}.md:1: lesson: will change: heading" in out  # the plan, field by field
    assert "Check passed. Lessons: 0 created, 1 updated, 2 unchanged. (nothing was written)" in out
    assert Lesson.objects.get(pk=demo.pk).heading == demo.heading
    assert LogEntry.objects.count() == logged


def test_new_flashcards_and_questions_may_leave_their_key_out(demo, tmp_path):
    demo.status = Lesson.Status.DRAFT
    demo.save()
    path = seed_file(export(tmp_path), demo)
    text = path.read_text()
    last = demo.questions.get(position=8)
    text = text.replace(f"::: question 8 {last.key}\n", "::: question 8\n")
    path.write_text(text + "\n::: flashcard 9\nA new front\n\n::: back\nA new back\n")
    out = import_lessons(tmp_path)
    card = Flashcard.objects.get(lesson=demo, front="A new front")
    assert re.search(rf":\d+: flashcard 9: new flashcard \(key {card.key}\)", out), out
    # No key: a new question (the one it replaces had no answers, so it simply goes).
    new = demo.questions.get(position=8)
    assert new.pk != last.pk and new.prompt == last.prompt
    assert re.search(rf":\d+: question 8: new question \(key {new.key}\)", out), out
    assert f"(key {last.key}), which was deleted" in out
    assert "--write-keys" in out
    import_lessons(tmp_path, "--write-keys")  # keyless again: new again, and keys written
    assert Flashcard.objects.filter(lesson=demo, front="A new front").count() == 1

    path.write_text(path.read_text() + "\n::: flashcard 10\nAnother\n\n::: back\nBack\n")
    out = import_lessons(tmp_path, "--write-keys")
    card = Flashcard.objects.get(lesson=demo, front="Another")
    assert f"::: flashcard 10 {card.key}\n" in path.read_text()
    assert "0 created, 0 updated, 3 unchanged" in import_lessons(tmp_path)


def test_a_short_new_lesson_file_is_enough_and_never_rewrites_its_subject(demo, tmp_path):
    description = Subject.objects.get(slug="computing").description
    (tmp_path / "caching.md").write_text(
        "---\n"
        'title: "Caching"\n'
        'subject: "computing"\n'
        'subject_description: ""\n'
        'area: "systems"\n'
        "age_from: 16\n"
        "age_to: 18\n"
        "---\n\n::: summary\nKeep what you read often close by.\n"
        + "".join(
            f"\n::: {name}\nSome {name}.\n"
            for name in ["objectives", "heading", "body", "example", "recap"]
        )
    )
    out = import_lessons(tmp_path)
    lesson = Lesson.objects.get(title="Caching")
    assert lesson.slug == "caching" and lesson.status == Lesson.Status.DRAFT
    assert f"caching.md:1: lesson: new lesson (public id {lesson.public_id})" in out
    assert Subject.objects.get(slug="computing").description == description
    assert lesson.area.name == "systems"
    assert "0 created, 0 updated, 1 unchanged" in import_lessons(tmp_path)  # found by slug
    import_lessons(tmp_path, "--update-subjects")
    assert Subject.objects.get(slug="computing").description == ""


def test_an_import_refuses_a_lesson_changed_in_the_admin_since_export(
    demo,
    tmp_path,
    editor_client,  # noqa: F811
):
    path = seed_file(export(tmp_path), demo)
    path.write_text(path.read_text().replace(demo.heading, "The file's heading"))
    data = change_page_data(editor_client, demo) | {"heading": "The admin's heading"}
    assert editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data).status_code == 302
    message = refused(tmp_path)
    assert re.search(
        rf"{path.name}:\d+: revision: the lesson was changed in the admin by ada on .* since "
        r"this file was exported",
        message,
    ), message
    assert Lesson.objects.get(pk=demo.pk).heading == "The admin's heading"
    import_lessons(tmp_path, "--force")
    assert Lesson.objects.get(pk=demo.pk).heading == "The file's heading"
    # An import is not an admin change: the same file, edited again, imports.
    path.write_text(path.read_text().replace("The file's heading", "Edited again"))
    import_lessons(tmp_path)
    assert Lesson.objects.get(pk=demo.pk).heading == "Edited again"


def test_a_file_with_windows_line_endings_imports_as_unchanged(demo, tmp_path):
    path = seed_file(export(tmp_path), demo)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert "0 created, 0 updated, 3 unchanged" in import_lessons(tmp_path)


def test_one_pass_names_the_problems_of_every_file(demo, tmp_path):
    export(tmp_path)
    (tmp_path / "tiny.md").write_text('---\ntitle: "Tiny"\n---\n')
    path = tmp_path / "mt_twcpO-945r.md"
    text = path.read_text().replace("age_from: 22", "age_from: -3")
    path.write_text(text.replace("needs_first: []", 'needs_first: ["mt_nope000000"]'))
    message = refused(tmp_path, "--check")
    assert "tiny.md:1: subject: the front matter needs `subject:`" in message
    assert "mt_twcpO-945r.md:11: age_from: Ensure this value is greater than or equal to 0." in (
        message
    )
    assert "mt_twcpO-945r.md:15: needs_first: names the lesson mt_nope000000, which does not" in (
        message
    )
    (tmp_path / "tiny.md").write_text(path.read_text())
    assert "is also the public id in" in refused(tmp_path)


def test_the_documented_example_is_a_valid_lesson_file():
    from lessons.files import markdown_to_lesson

    doc = (Path(__file__).resolve().parents[2] / "docs" / "lesson-files.md").read_text()
    example = doc.split("```markdown\n", 1)[1].split("\n```", 1)[0]
    example = re.sub(r"\s*<!--.*?-->", "", example)
    lesson = markdown_to_lesson(example, source="example.md")
    assert lesson["title"] == "Caching and Cache Invalidation"
    assert [q["key"] for q in lesson["questions"]] == ["5f1c9a02", ""]
    assert lesson["questions"][0]["choices"][2]["explanation"].startswith("Write-back")


def test_keep_memories_keeps_them_when_the_right_answer_changes(demo, tmp_path):
    answer(Client(), demo, right=True)
    first = demo.questions.get(position=1)
    path = seed_file(export(tmp_path), demo)
    right = first.correct_letters[0]
    path.write_text(swap_verdicts(path.read_text(), right, "C" if right != "C" else "B"))
    out = import_lessons(tmp_path, "--keep-memories")
    assert "1 learner's memory of it kept" in out
    assert Memory.objects.filter(question=first).count() == 1


class Terminal(io.StringIO):
    """Standard input as a person at a terminal types it."""

    def isatty(self) -> bool:
        return True


def keyless_seventh_question(demo, tmp_path) -> Question:
    """An export whose question 7 is written anew without a key (the editors' review, D1)."""
    client = Client()
    for _ in range(7):
        answer(client, demo, right=True)
    seventh = demo.questions.get(position=7)
    path = seed_file(export(tmp_path), demo)
    text = path.read_text()
    start, end = text.index(f"::: question 7 {seventh.key}"), text.index("::: question 8 ")
    path.write_text(
        text[:start]
        + "::: question 7\nA new prompt?\n\n::: choice A right\nYes\n\n::: choice B wrong\nNo\n\n"
        + "::: why B\nBecause.\n\n::: explanation\nIt is so.\n\n"
        + text[end:]
    )
    return seventh


def test_in_a_terminal_the_import_asks_and_does_what_the_editor_answers(
    demo, tmp_path, monkeypatch
):
    seventh = keyless_seventh_question(demo, tmp_path)
    monkeypatch.setattr("sys.stdin", Terminal("maybe\nretire\n"))
    out = import_lessons(tmp_path)
    assert "will be created" in out  # the plan first, in the future tense
    assert out.count("Retire what is listed above") == 2  # asked again after "maybe"
    assert "Please answer retire or delete, or cancel." in out
    assert "which was retired, keeping its 1 answer from 1 learner" in out
    assert Question.everything.get(pk=seventh.pk).retired_at is not None


def test_a_question_and_a_flashcard_left_out_are_told_how_to_retire_the_question(
    demo, tmp_path, monkeypatch
):
    seventh = keyless_seventh_question(demo, tmp_path)
    rate_every_card(Client(), demo.get_flashcards_url(), "3")
    path = seed_file(tmp_path, demo)
    text = path.read_text()
    start = text.index("::: flashcard 2 ")
    path.write_text(text[:start] + text[text.index("::: flashcard 3 ") :])
    monkeypatch.setattr("sys.stdin", Terminal("\n"))
    out = refused(tmp_path)
    assert (
        "To retire the question instead: cancel, put the flashcard back in the file, import "
        "and answer retire; then import again without it."
    ) in out
    assert "[delete/cancel]" in out
    assert Question.objects.get(pk=seventh.pk).position == 7


def test_a_yes_answers_a_question_with_one_way_to_go_on(demo, tmp_path, monkeypatch):
    answer(Client(), demo, right=True)
    path = seed_file(export(tmp_path), demo)
    path.write_text(path.read_text().replace('status: "published"', 'status: "draft"'))
    monkeypatch.setattr("sys.stdin", Terminal("yes\n"))
    out = import_lessons(tmp_path)
    assert "Set what is listed above back to draft all the same" in out
    assert "[draft/cancel]" in out and out.count("back to draft all the same") == 1
    demo.refresh_from_db()
    assert demo.status == Lesson.Status.DRAFT


def test_a_cancelled_answer_writes_nothing(demo, tmp_path, monkeypatch):
    seventh = keyless_seventh_question(demo, tmp_path)
    monkeypatch.setattr("sys.stdin", Terminal("\n"))
    assert "Cancelled; nothing was written." in refused(tmp_path)
    assert Question.objects.get(pk=seventh.pk).position == 7
    assert not Question.objects.filter(prompt="A new prompt?").exists()


def test_no_input_refuses_with_the_plan_even_at_a_terminal(demo, tmp_path, monkeypatch):
    keyless_seventh_question(demo, tmp_path)
    monkeypatch.setattr("sys.stdin", Terminal("retire\n"))
    message = refused(tmp_path, "--no-input")
    assert "will be created" in message and "--allow-retire or --allow-delete" in message
    assert not Question.objects.filter(prompt="A new prompt?").exists()


def test_a_file_from_before_a_question_was_replaced_brings_it_back(
    demo,
    tmp_path,
    editor_client,  # noqa: F811
):
    """The editors' review of 2026-12-06: a file exported before "Replace this question" names
    the retired question's key; its check and its import bring that question back in place of
    the replacement (nobody answered it, so it goes), instead of failing on the key."""
    answer(Client(), demo, right=True)
    first = demo.questions.get(position=1)
    export(tmp_path)
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == first.pk)
    data[f"questions-{index}-prompt"] = "A question written in place of the first one?"
    data[f"questions-{index}-replace"] = "on"
    data["_replace"] = "yes"
    assert editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data).status_code == 302
    replacement = demo.questions.get(position=1)
    assert replacement.pk != first.pk

    check = import_lessons(tmp_path, "--check", "--force")
    assert f"(key {first.key}) will be brought back, with its answers" in check
    assert not re.search(r"will change: *$", check, re.MULTILINE)  # nothing else changes
    assert f"(key {replacement.key}) is left out and will be deleted" in check
    assert demo.questions.get(position=1).pk == replacement.pk

    out = import_lessons(tmp_path, "--force")
    assert f"(key {first.key}) was brought back" in out
    back = demo.questions.get(position=1)
    assert (back.pk, back.retired_at, back.prompt) == (first.pk, None, first.prompt)
    assert not Question.everything.filter(pk=replacement.pk).exists()
    assert Review.objects.filter(question=first).count() == 1


def test_a_mistyped_subject_is_named_as_a_new_subject_before_it_is_made(demo, tmp_path):
    """The editors' walk of 2026-12-06: a typo in a file's subject made a new subject (and area)
    and moved the published lesson into it; the plan said only "will change: subject, area"."""
    path = seed_file(export(tmp_path), demo)
    path.write_text(path.read_text().replace('subject: "computing"', 'subject: "computnig"'))
    check = import_lessons(tmp_path, "--check")
    assert re.search(r":\d+: subject: a new subject “.*” \(computnig\) will be created", check)
    assert re.search(rf":\d+: area: a new area “.*” \({demo.area.slug}\) will be created", check)
    assert not Subject.objects.filter(slug="computnig").exists()
    out = import_lessons(tmp_path)
    assert re.search(r"subject: a new subject “.*” \(computnig\) created", out)


def test_a_file_that_two_lessons_of_the_same_title_could_be_is_refused(demo, tmp_path):
    """The editors' walk of 2026-12-06: two lessons in a subject can share a title (and so a
    slug); a file without a public id then matched one of them, unsaid which."""
    path = seed_file(export(tmp_path), demo)
    text = re.sub(r'public_id: "[^"]*"\n', "", path.read_text())
    path.write_text(text.replace(demo.heading, "A heading changed in the file"))
    twin = Lesson.objects.get(pk=demo.pk)
    twin.pk, twin.public_id = None, "mt_0twin00000"
    twin.save()
    message = refused(tmp_path)
    assert f"{demo.public_id} and mt_0twin00000 in this subject have this file's slug" in message
    assert "add the public_id of the lesson it is about" in message
    assert not Lesson.objects.filter(heading="A heading changed in the file").exists()


def test_a_file_without_a_public_id_never_changes_a_published_lesson_of_the_same_title(
    demo, tmp_path
):
    """The editors' walk of 2026-12-07: a new lesson's file, no public id, titled like a
    published lesson of its subject, was found by subject and slug and applied over it: the
    lesson went to draft (a 404 for learners) and lost its questions. The plan said only "It
    changes the lesson"."""
    path = seed_file(export(tmp_path), demo)
    text = re.sub(r'public_id: "[^"]*"\n', "", path.read_text())
    path.write_text(text.replace(demo.heading, "A heading changed in the file"))
    for options in [("--check",), ()]:
        message = refused(tmp_path, *options)
        assert (
            f"the published lesson “{demo.title}” ({demo.public_id}) in this subject has this "
            f'file\'s slug: to change it, add public_id: "{demo.public_id}" to the file; for a '
            "new lesson, give it another slug"
        ) in message
    # Without a slug, the title makes it (second review of stop 69: the title was blamed
    # whatever the file said).
    path.write_text(re.sub(r'slug: "[^"]*"\n', "", path.read_text()))
    assert (
        f"has the slug this file's title makes: to change it, add public_id: "
        f'"{demo.public_id}" to the file; for a new lesson, give it another title'
    ) in refused(tmp_path)
    demo.refresh_from_db()
    assert (
        demo.status == Lesson.Status.PUBLISHED and demo.heading != "A heading changed in the file"
    )


def test_a_new_draft_from_a_file_without_a_public_id_is_found_again_by_its_title(demo, tmp_path):
    path = tmp_path / "new.md"
    text = seed_file(export(tmp_path), demo).read_text()
    text = re.sub(r'(public_id|slug): "[^"]*"\n', "", text).replace(
        demo.title, "A Lesson of Its Own"
    )
    text = re.sub(r"(::: (question|flashcard) \d+) [0-9a-f]+", r"\1", text)
    text = text.replace('status: "published"', 'status: "draft"')
    for old in tmp_path.glob("mt_*.md"):
        old.unlink()
    path.write_text(text)
    assert "new lesson (public id" in import_lessons(tmp_path)
    import_lessons(tmp_path)  # again, without the keys written back
    assert Lesson.objects.filter(title="A Lesson of Its Own").count() == 1


def test_a_new_question_at_the_place_of_one_the_file_moves_is_refused_not_failed(demo, tmp_path):
    """A keyless new question 3 where the file moves question 3 (by its key) to 5: the move is
    refused on its line, and the new question is not saved over the place it still holds."""
    third, fifth = demo.questions.get(position=3), demo.questions.get(position=5)
    path = seed_file(export(tmp_path), demo)
    text = path.read_text().replace(f"::: question 3 {third.key}", "::: question 3")
    path.write_text(text.replace(f"::: question 5 {fifth.key}", f"::: question 5 {third.key}"))
    message = refused(tmp_path, "--check")
    assert f"question {third.key} is at position 3 in the admin and 5 in the file" in message
    assert demo.questions.get(position=3).pk == third.pk


@pytest.mark.parametrize(
    "video", ["../../../../etc/passwd.mp4", "videos/../secret.mp4", "videos/stars.exe", "/x.mp4"]
)
def test_a_video_is_named_only_as_an_uploaded_one(demo, tmp_path, settings, video):
    settings.MEDIA_ROOT = tmp_path / "media"
    (tmp_path / "media" / "videos").mkdir(parents=True)
    (tmp_path / "media" / "videos" / "Stars.MP4").write_bytes(b"\0")
    files = tmp_path / "files"
    files.mkdir()
    path = seed_file(export(files), demo)
    # As the admin stores an upload: its name as uploaded, in any case.
    with_video = path.read_text().replace('video: ""', 'video: "videos/Stars.MP4"', 1)
    with_video = re.sub(r"::: transcript\n*", "::: transcript\nWe look up.\n\n", with_video)
    path.write_text(with_video)
    assert "warning: video" not in import_lessons(files)
    assert Lesson.objects.get(pk=demo.pk).video.name == "videos/Stars.MP4"

    path = seed_file(export(files), demo)  # as exported now, with its video
    path.write_text(path.read_text().replace('"videos/Stars.MP4"', f'"{video}"'))
    assert "expected the name of a video uploaded in the admin" in refused(files)
    assert Lesson.objects.get(pk=demo.pk).video.name == "videos/Stars.MP4"


def test_a_video_this_site_does_not_have_yet_is_warned_of_not_refused(demo, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    files = tmp_path / "files"
    files.mkdir()
    path = seed_file(export(files), demo)
    text = path.read_text().replace('video: ""', 'video: "videos/later.mp4"', 1)
    path.write_text(re.sub(r"::: transcript\n*", "::: transcript\nWe look up.\n\n", text))
    out = import_lessons(files)
    assert 'warning: video: no uploaded video is called "videos/later.mp4" on this site' in out
    assert Lesson.objects.get(pk=demo.pk).video.name == "videos/later.mp4"


def test_a_subjects_description_the_file_changes_is_said_to_be_kept(demo, tmp_path):
    """Only --update-subjects changes a subject's texts, which other lessons share; a file's new
    description was passed over in silence ("1 unchanged") (editors' reviews of 5 and 7
    December)."""
    path = seed_file(export(tmp_path), demo)
    text = re.sub(
        r'subject_description: ".*"', 'subject_description: "A new description"', path.read_text()
    )
    path.write_text(text)
    out = import_lessons(tmp_path, "--check")
    assert re.search(
        r":\d+: subject: the file's subject description differs from the site's and is left as "
        r"it is \(other lessons share it\): change it on the subject's admin page",
        out,
    ), out
    assert out.count("To change them from the files instead, import with --update-subjects.") == 1
    import_lessons(tmp_path)
    demo.subject.refresh_from_db()
    assert demo.subject.description != "A new description"
