from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from lessons.models import Lesson, Question, new_public_id
from tests.factories import make_area, make_lesson, make_question, make_subject


def test_new_public_ids_look_like_the_seeds():
    ids = {new_public_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"mt_[A-Za-z0-9_-]{10}", public_id) for public_id in ids)


def test_a_lesson_gets_a_public_id_and_a_canonical_address(db):
    lesson = make_lesson(slug="counting-stars")
    assert re.fullmatch(r"mt_[A-Za-z0-9_-]{10}", lesson.public_id)
    assert lesson.get_absolute_url() == f"/learn/computing/counting-stars-{lesson.public_id}"


def test_a_malformed_public_id_is_refused(db):
    lesson = make_lesson()
    lesson.public_id = "mt_short"
    with pytest.raises(ValidationError) as error:
        lesson.full_clean()
    assert "public_id" in error.value.message_dict


def test_ages_must_be_in_order(db):
    lesson = make_lesson()
    lesson.age_from, lesson.age_to = 14, 12
    with pytest.raises(ValidationError) as error:
        lesson.full_clean()
    assert "age_to" in error.value.message_dict
    with pytest.raises(IntegrityError):
        lesson.save()


def test_the_area_must_belong_to_the_lessons_subject(db):
    lesson = make_lesson()
    other_area = make_area(make_subject(name="Music", slug="music"), name="Rhythm", slug="rhythm")
    lesson.area = other_area
    with pytest.raises(ValidationError) as error:
        lesson.full_clean()
    assert "another subject" in error.value.message_dict["area"][0]


def test_markdown_is_rendered_when_saved_with_tables(db):
    lesson = make_lesson(
        example="| Slot | A |\n| --- | --- |\n| 1 | A1 |", body="Some **bold** text"
    )
    assert "<table>" in lesson.example_html and "<td>A1</td>" in lesson.example_html
    assert lesson.body_html == "<p>Some <strong>bold</strong> text</p>"


def test_script_and_javascript_links_never_survive_rendering(db):
    lesson = make_lesson(
        body='<script>alert("x")</script>\n\n[click](javascript:alert(1))'
        " <img src=x onerror=alert(1)>"
    )
    assert "<script" not in lesson.body_html
    assert "<img" not in lesson.body_html
    assert 'href="javascript' not in lesson.body_html


def test_edited_markdown_is_rendered_again_on_save(db):
    lesson = make_lesson(recap="old")
    lesson.recap = "*new*"
    lesson.save()
    lesson.refresh_from_db()
    assert lesson.recap_html == "<p><em>new</em></p>"


def test_question_positions_run_from_one_to_eight(db):
    lesson = make_lesson(questions=0)
    question = Question(lesson=lesson, position=9, prompt="?", explanation="!", choices=[])
    with pytest.raises(ValidationError) as error:
        question.full_clean()
    assert "position" in error.value.message_dict
    # The database keeps only the floor: a reorder passes through positions above 8.
    with pytest.raises(IntegrityError):
        make_question(lesson, position=0)


def test_two_questions_cannot_share_a_position(db):
    lesson = make_lesson(questions=1)
    with pytest.raises(IntegrityError):
        make_question(lesson, position=1)


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ([{"text": str(n), "correct": True} for n in range(7)], "at most 6 choices"),
        ([{"text": "", "correct": True}, {"text": "B", "correct": False}], "Choice A has no text"),
        ([{"text": "A", "correct": "yes"}], "must say whether it is correct"),
        ("not a list", "must be a list"),
    ],
)
def test_question_choices_are_checked_with_a_clear_message(db, choices, message):
    question = Question(
        lesson=make_lesson(questions=0),
        position=1,
        prompt="?",
        choices=choices,
        explanation="Because.",
    )
    with pytest.raises(ValidationError) as error:
        question.full_clean()
    assert message in " ".join(error.value.messages)


def test_choices_are_lettered_and_know_which_are_correct(db):
    question = make_question(make_lesson(questions=0))
    assert [c["letter"] for c in question.labelled_choices] == ["A", "B", "C"]
    assert question.correct_letters == ["A"]


def test_needs_first_is_one_way_and_connections_go_both_ways(db):
    first = make_lesson(title="First", slug="first")
    second = make_lesson(title="Second", slug="second")
    second.needs_first.add(first)
    second.connections.add(first)
    assert list(first.opens_up.all()) == [second]
    assert list(first.needs_first.all()) == []
    assert list(first.connections.all()) == [second]


def test_published_excludes_drafts(db):
    make_lesson(title="Visible", slug="visible")
    make_lesson(title="Hidden", slug="hidden", status=Lesson.Status.DRAFT)
    assert [lesson.title for lesson in Lesson.objects.published()] == ["Visible"]
