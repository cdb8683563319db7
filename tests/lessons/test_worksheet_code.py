"""The short address printed on a worksheet, /w/<code>: its code leads to the type-in form."""

from __future__ import annotations

from html import unescape

import pytest

from lessons.models import Lesson
from tests.conftest import SEED_PATH
from tests.factories import make_lesson

ANSWERS = SEED_PATH + "/worksheet/answers"


def code_of(lesson: Lesson) -> str:
    return lesson.worksheet_code(list(lesson.questions.all()))


@pytest.mark.parametrize("typed", ["{code}", "{lower}", "{dashed}"])
def test_the_short_address_leads_to_the_type_in_form_with_the_code(client, demo, typed):
    code = code_of(demo)
    address = typed.format(code=code, lower=code.lower(), dashed=f"{code[:3]}-{code[3:]}")
    response = client.get(f"/w/{address}")
    assert response.status_code == 302
    assert response["Location"] == f"{ANSWERS}?code={code}"


def test_the_code_can_be_typed_into_a_form_at_w(client, demo):
    form = client.get("/w")
    assert form.status_code == 200
    assert 'action="/w"' in form.content.decode()
    response = client.get("/w", {"code": f" {code_of(demo).lower()} "})
    assert response.status_code == 302
    assert response["Location"] == f"{ANSWERS}?code={code_of(demo)}"


def test_the_type_in_form_arrives_with_the_code_filled_in(client, demo):
    code = code_of(demo)
    html = client.get(f"{ANSWERS}?code={code.lower()}").content.decode()
    assert f'name="code" value="{code}"' in html
    hostile = client.get(ANSWERS, {"code": '"><script>'}).content.decode()
    assert "<script>" not in hostile.split('name="code"')[1].split(">")[0]


def test_an_unknown_code_is_a_clear_404_with_the_form_again(client, demo):
    response = client.get("/w/ZZZZZZ")
    assert response.status_code == 404
    html = unescape(response.content.decode())
    assert "No worksheet has the code ZZZZZZ now." in html
    assert 'value="ZZZZZZ"' in html and 'aria-invalid="true"' in html


def test_a_sheet_printed_before_its_questions_changed_is_not_found(client, demo):
    old = code_of(demo)
    question = demo.questions.get(position=2)
    question.prompt += " (reworded)"
    question.save()
    assert client.get(f"/w/{old}").status_code == 404
    response = client.get(f"/w/{code_of(demo)}")
    assert response["Location"] == f"{ANSWERS}?code={code_of(demo)}"


def test_drafts_have_no_short_address(client, db):
    draft = make_lesson(status=Lesson.Status.DRAFT)
    assert client.get(f"/w/{code_of(draft)}").status_code == 404


def test_two_lessons_with_one_code_are_both_offered(client, db, monkeypatch):
    first = make_lesson(title="First", slug="first")
    second = make_lesson(title="Second", slug="second")
    monkeypatch.setattr(Lesson, "worksheet_code", lambda self, questions: "ABC234")
    response = client.get("/w/ABC234")
    assert response.status_code == 200
    html = response.content.decode()
    for lesson in (first, second):
        assert f'href="{lesson.get_absolute_url()}/worksheet/answers?code=ABC234"' in html
