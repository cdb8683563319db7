"""Regressions for what the second independent review found."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from lessons.models import Lesson
from practice.models import Learner, Memory
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer


@pytest.fixture
def admin_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="a long admin password"))
    return client


def question_form(admin_client, question) -> dict:
    form = (
        admin_client.get(f"/admin/lessons/question/{question.pk}/change/").context["adminform"].form
    )
    return {
        k: v for k, v in ((f.name, form[f.name].value()) for f in form) if v not in (None, False)
    }


def test_a_questions_own_page_cannot_break_a_published_lesson(admin_client, demo):
    question = demo.questions.get(position=1)
    data = question_form(admin_client, question)
    for key in [k for k in data if k.endswith("_correct")]:
        data.pop(key)
    response = admin_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 200
    assert "Question 1 has no correct choice" in response.content.decode()
    question.refresh_from_db()
    assert question.correct_letters


def test_a_published_lessons_question_cannot_be_deleted_on_its_own(admin_client, demo):
    question = demo.questions.get(position=1)
    response = admin_client.post(
        f"/admin/lessons/question/{question.pk}/delete/", {"post": "yes"}, follow=True
    )
    assert "cannot be deleted: unpublish the lesson first" in response.content.decode()
    assert demo.questions.count() == 8


def test_changing_the_answer_of_a_draft_resets_memories_too(admin_client, demo):
    answer(Client(), demo, right=True)
    Lesson.objects.filter(pk=demo.pk).update(status=Lesson.Status.DRAFT)
    question = demo.questions.get(position=1)
    data = question_form(admin_client, question)
    old = "ABCDEF".index(question.correct_letters[0])
    new = next(i for i, c in enumerate(question.choices) if not c["correct"])
    data.pop(f"choice_{old}_correct")
    data[f"choice_{new}_correct"] = "on"
    url = f"/admin/lessons/question/{question.pk}/change/"
    asked = admin_client.post(url, data)  # learners remember it: the editor is asked first
    assert asked.status_code == 200 and "1 learner remembers it." in asked.content.decode()
    assert Memory.objects.filter(question=question).exists()
    assert admin_client.post(url, data | {"_memory": "reset"}).status_code == 302
    assert not Memory.objects.filter(question=question).exists()


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps({"version": True, "exported_at": "2026-01-01T00:00:00Z", "items": []}).encode(),
        json.dumps(
            {"version": 1, "exported_at": "0001-01-01T00:00:00+05:00", "items": []}
        ).encode(),
    ],
    ids=["deeply nested", "version true", "year one"],
)
def test_odd_progress_files_are_refused_not_errors(client, db, content):
    response = client.post("/progress/import", {"file": SimpleUploadedFile("p.json", content)})
    assert response.status_code == 400
    assert not Learner.objects.exists()


def test_a_progress_file_saved_with_a_byte_order_mark_is_read(client, demo):
    answer(client, demo, right=True)
    content = "\ufeff".encode() + b"".join(client.get("/progress/export").streaming_content)
    response = Client().post("/progress/import", {"file": SimpleUploadedFile("p.json", content)})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "path",
    ["/api/v1/lessons/%00", "/api/v1/lessons?q=%00", "/api/v1/lessons?subject=%00x"],
)
def test_nul_characters_never_reach_the_database(client, demo, path):
    assert client.get(path).status_code in (404, 422)


def test_prune_refuses_zero_idle_days(db):
    with pytest.raises(CommandError, match="at least 1"):
        call_command("prune_learners", "--idle-days", "0", stdout=io.StringIO())


def test_a_cached_page_holds_no_learner_data(demo):
    learner = Client()
    answer(learner, demo, right=True)
    assert "1 learned so far" in learner.get(SEED_PATH).content.decode()
    visitor = Client().get(SEED_PATH).content.decode()
    assert "1 learned so far" not in visitor and "Your sky" in visitor
    assert 'name="csrfmiddlewaretoken"' not in visitor


@pytest.mark.parametrize("edit", ["question", "flashcard", "subject", "link", "delete"])
def test_every_kind_of_edit_shows_on_the_next_request(client, demo, edit):
    before = client.get(SEED_PATH).content.decode()
    if edit == "question":
        question = demo.questions.get(position=1)
        question.prompt = "A brand new prompt?"
        question.save()
        expected = "A brand new prompt?"
        after = client.get(SEED_PATH + "/worksheet").content.decode()
    elif edit == "flashcard":
        card = demo.flashcards.first()
        card.front = "A brand new front"
        card.save()
        expected = "A brand new front"
        after = client.get(SEED_PATH + "/flashcards").content.decode()
    elif edit == "subject":
        demo.subject.name = "Computing Science"
        demo.subject.save()
        expected = "Computing Science"
        after = client.get(SEED_PATH).content.decode()
    elif edit == "link":
        demo.needs_first.clear()
        expected = "Nothing; this is a starting point."
        after = client.get(SEED_PATH).content.decode()
    else:
        Lesson.objects.get(public_id="mt_Nv1-WLGIO4").delete()
        expected = "Nothing yet; more lessons are on their way."
        after = client.get(SEED_PATH).content.decode()
    assert expected not in before or edit == "question"
    assert expected in after
