from __future__ import annotations

import io

from django.core.management import call_command

from lessons.models import Area, Flashcard, Lesson, Question, Subject


def snapshot() -> list:
    return [
        list(Subject.objects.values().order_by("pk")),
        list(Area.objects.values().order_by("pk")),
        list(Lesson.objects.values().order_by("pk")),
        list(Question.objects.values().order_by("pk")),
        list(Flashcard.objects.values().order_by("pk")),
        list(Lesson.needs_first.through.objects.values().order_by("pk")),
        list(Lesson.connections.through.objects.values().order_by("pk")),
    ]


def test_load_demo_creates_the_seed_lesson_and_its_neighbours(db):
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "3 lessons created" in out.getvalue()
    seed = Lesson.objects.get(public_id="mt__e-JwIxHek")
    assert seed.is_published
    assert (seed.subject.name, seed.area.name, seed.age_from, seed.age_to) == (
        "Computing",
        "Machine Learning",
        23,
        24,
    )
    assert [lesson.public_id for lesson in seed.needs_first.all()] == ["mt_twcpO-945r"]
    assert [lesson.public_id for lesson in seed.opens_up.all()] == ["mt_Nv1-WLGIO4"]


def test_every_demo_lesson_is_complete(demo):
    for lesson in Lesson.objects.all():
        questions = list(lesson.questions.all())
        assert [q.position for q in questions] == list(range(1, 9)), lesson
        for question in questions:
            question.full_clean()
            assert question.explanation.strip()
            for choice in question.choices:
                assert choice["correct"] or choice["explanation"].strip(), question
        assert lesson.flashcards.count() >= 4
        assert len(lesson.objective_list) >= 3


def test_load_demo_run_twice_changes_nothing(demo):
    before = snapshot()
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "0 lessons created, 0 updated, 3 unchanged" in out.getvalue()
    assert snapshot() == before


def test_load_demo_if_empty_leaves_existing_content_alone(db):
    call_command("load_demo", stdout=io.StringIO())
    Lesson.objects.filter(public_id="mt__e-JwIxHek").update(title="Edited by an editor")
    out = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=out)
    assert "not loaded" in out.getvalue()
    assert Lesson.objects.get(public_id="mt__e-JwIxHek").title == "Edited by an editor"
