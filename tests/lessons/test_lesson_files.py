from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lessons.models import Lesson, Question
from tests.factories import make_lesson


def export(directory: Path) -> dict[str, bytes]:
    call_command("export_lessons", str(directory), stdout=io.StringIO())
    return {path.name: path.read_bytes() for path in sorted(directory.glob("*.md"))}


def wipe() -> None:
    Lesson.objects.all().delete()
    from lessons.models import Area, Subject

    Area.objects.all().delete()
    Subject.objects.all().delete()


def test_export_then_import_into_an_empty_database_then_export_is_byte_identical(demo, tmp_path):
    make_lesson(
        title="Tricky <b>text</b>",
        slug="tricky",
        status=Lesson.Status.DRAFT,
        body="::: not a block\n\n  indented\ttabs  \n\n# A heading",
        tip="",
    )
    first = export(tmp_path / "first")
    assert len(first) == 4
    wipe()
    call_command("import_lessons", str(tmp_path / "first"), stdout=io.StringIO())
    second = export(tmp_path / "second")
    assert second == first
    tricky = Lesson.objects.get(slug="tricky")
    assert tricky.body.startswith("::: not a block")
    assert tricky.status == Lesson.Status.DRAFT


def test_import_keeps_question_keys_so_progress_survives(demo, tmp_path):
    keys = {q.position: q.key for q in demo.questions.all()}
    export(tmp_path)
    wipe()
    call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    lesson = Lesson.objects.get(public_id=demo.public_id)
    assert {q.position: q.key for q in lesson.questions.all()} == keys


def test_import_updates_by_public_id_and_reports_what_changed(demo, tmp_path):
    export(tmp_path)
    path = tmp_path / f"{demo.public_id}.md"
    path.write_text(path.read_text().replace(demo.heading, "A better heading"))
    out = io.StringIO()
    call_command("import_lessons", str(tmp_path), stdout=out)
    assert "0 created, 1 updated, 2 unchanged" in out.getvalue()
    assert Lesson.objects.get(pk=demo.pk).heading == "A better heading"


def test_a_published_lesson_file_must_pass_the_publish_rule(demo, tmp_path):
    export(tmp_path)
    path = tmp_path / f"{demo.public_id}.md"
    text = path.read_text()
    start = text.index("::: question 8 ")
    end = text.index("::: flashcard 1 ")
    path.write_text(text[:start] + text[end:])
    before = Question.objects.count()
    with pytest.raises(CommandError, match="needs exactly 8 questions; it has 7"):
        call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    assert Question.objects.count() == before


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda t: t.replace("---\n", "", 1), "must open with front matter"),
        (
            lambda t: t.replace('status: "published"', "status: published"),
            ':5: status: put the text in double quotes, like "published"',
        ),
        (
            lambda t: t.replace("::: summary", "::: sumary"),
            r":\d+: block: unknown block `::: sumary`",
        ),
    ],
)
def test_a_bad_file_is_refused_with_where_and_why_and_nothing_changes(
    demo, tmp_path, spoil, message
):
    export(tmp_path)
    path = tmp_path / f"{demo.public_id}.md"
    path.write_text(spoil(path.read_text()))
    title = demo.title
    with pytest.raises(CommandError, match=message):
        call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    assert Lesson.objects.get(pk=demo.pk).title == title


def test_the_demo_content_ships_as_lesson_files():
    files = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "demo").glob("*.md"))
    assert [f.name for f in files] == ["mt_Nv1-WLGIO4.md", "mt__e-JwIxHek.md", "mt_twcpO-945r.md"]


@pytest.mark.parametrize(
    ("needs", "message"),
    [
        ('["mt_twcpO-945r"]', "“Message Passing and Asynchronous Work” cannot need itself first."),
        (
            '["mt_Nv1-WLGIO4"]',
            "Lessons cannot need each other first in a circle: “Serving a Model: Batching, the "
            "Key-Value Cache and Quantisation” (mt_Nv1-WLGIO4) → “Training Across Many Devices: "
            "Data, Model and Pipeline Parallelism” (mt__e-JwIxHek) → “Message Passing and "
            "Asynchronous Work” (mt_twcpO-945r) → “Serving a Model",
        ),
    ],
)
def test_lesson_files_whose_prerequisites_go_round_in_a_circle_are_refused(
    demo, tmp_path, needs, message
):
    export(tmp_path)
    path = tmp_path / "mt_twcpO-945r.md"
    text = path.read_text().replace("needs_first: []", f"needs_first: {needs}")
    path.write_text(text.replace("::: heading\n", "::: heading\nA new heading: "))
    with pytest.raises(CommandError) as refused:
        call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    assert message in str(refused.value)
    lesson = Lesson.objects.get(public_id="mt_twcpO-945r")
    assert not lesson.needs_first.exists()
    assert not lesson.heading.startswith("A new heading")


def test_every_field_an_editor_writes_has_its_place_in_a_lesson_file():
    """Lesson files are lossless both ways, but the round-trip tests cannot see a new Lesson
    field that was left out of both the download and the upload: it would be dropped unseen."""
    from lessons.files import FRONT_MATTER, TEXT_BLOCKS

    written = {
        field.name
        for field in Lesson._meta.get_fields()
        if (getattr(field, "concrete", False) or field.many_to_many)
        and field.editable
        and not field.auto_created
    }
    assert written - set(FRONT_MATTER) - set(TEXT_BLOCKS) == set()
