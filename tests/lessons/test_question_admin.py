"""A question's own admin page keeps its lesson's rules."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lessons.models import Lesson
from practice.models import Memory
from tests.practice.helpers import answer


@pytest.fixture
def superuser_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="a long admin password"))
    return client


def question_form(superuser_client, question) -> dict:
    form = (
        superuser_client.get(f"/admin/lessons/question/{question.pk}/change/")
        .context["adminform"]
        .form
    )
    return {
        k: v for k, v in ((f.name, form[f.name].value()) for f in form) if v not in (None, False)
    }


def test_a_questions_own_page_cannot_break_a_published_lesson(superuser_client, demo):
    question = demo.questions.get(position=1)
    data = question_form(superuser_client, question)
    for key in [k for k in data if k.endswith("_correct")]:
        data.pop(key)
    response = superuser_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 200
    assert "Question 1 has no correct choice" in response.content.decode()
    question.refresh_from_db()
    assert question.correct_letters


def test_a_published_lessons_question_cannot_be_deleted_on_its_own(superuser_client, demo):
    question = demo.questions.get(position=1)
    response = superuser_client.post(
        f"/admin/lessons/question/{question.pk}/delete/", {"post": "yes"}, follow=True
    )
    assert "cannot be deleted: unpublish the lesson first" in response.content.decode()
    assert demo.questions.count() == 8


def test_changing_the_answer_of_a_draft_resets_memories_too(superuser_client, demo):
    answer(Client(), demo, right=True)
    Lesson.objects.filter(pk=demo.pk).update(status=Lesson.Status.DRAFT)
    question = demo.questions.get(position=1)
    data = question_form(superuser_client, question)
    old = "ABCDEF".index(question.correct_letters[0])
    new = next(i for i, c in enumerate(question.choices) if not c["correct"])
    data.pop(f"choice_{old}_correct")
    data[f"choice_{new}_correct"] = "on"
    url = f"/admin/lessons/question/{question.pk}/change/"
    asked = superuser_client.post(url, data)  # learners remember it: the editor is asked first
    assert asked.status_code == 200 and "1 learner remembers it." in asked.content.decode()
    assert Memory.objects.filter(question=question).exists()
    assert superuser_client.post(url, data | {"_memory": "reset"}).status_code == 302
    assert not Memory.objects.filter(question=question).exists()


def test_a_missing_lessons_file_is_a_404_not_a_redirect_loop(superuser_client):
    response = superuser_client.get("/admin/lessons/lesson/999999/lesson-file/")
    assert response.status_code == 404
