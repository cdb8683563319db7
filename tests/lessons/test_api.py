from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import positive_data_acceptance

from lessons.models import Lesson
from practice.models import Learner, Review
from tests.factories import make_lesson, make_question

SEED = "mt__e-JwIxHek"


def test_openapi_is_a_valid_3_1_document_generated_from_the_code(client, db):
    from openapi_spec_validator import validate

    document = client.get("/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    validate(document)
    paths = set(document["paths"])
    assert {
        "/api/v1/subjects",
        "/api/v1/lessons",
        "/api/v1/lessons/{public_id}",
        "/api/v1/lessons/{public_id}/questions",
        "/api/v1/lessons/{public_id}/questions/{number}/check",
    } <= paths


def test_subjects_and_lessons_can_be_listed_and_searched(client, demo):
    make_lesson(title="Secret draft", slug="secret", status=Lesson.Status.DRAFT)
    assert client.get("/api/v1/subjects").json()[0]["lesson_count"] == 3
    found = client.get("/api/v1/lessons", {"q": "pipeline parallelism"}).json()
    assert [lesson["id"] for lesson in found["results"]] == [SEED]
    assert client.get("/api/v1/lessons", {"subject": "computing"}).json()["count"] == 3
    assert client.get("/api/v1/lessons", {"area": "machine-learning"}).json()["count"] == 2
    page = client.get("/api/v1/lessons", {"page_size": 2, "page": 2}).json()
    assert (page["count"], page["pages"], len(page["results"])) == (3, 2, 1)


def test_a_lesson_and_its_questions(client, demo):
    lesson = client.get(f"/api/v1/lessons/{SEED}").json()
    assert lesson["title"] == demo.title and lesson["question_count"] == 8
    assert lesson["flashcard_count"] == demo.flashcards.count() > 0
    assert [n["id"] for n in lesson["needs_first"]] == ["mt_twcpO-945r"]
    questions = client.get(f"/api/v1/lessons/{SEED}/questions").json()
    assert [q["number"] for q in questions] == list(range(1, 9))
    first = demo.questions.get(position=1)
    assert questions[0]["answer"] == first.correct_letters


def test_checking_an_answer_explains_it_and_stores_nothing(client, demo):
    question = demo.questions.get(position=2)
    wrong = next(c for c in question.labelled_choices if not c["correct"])
    url = f"/api/v1/lessons/{SEED}/questions/2/check"
    right = client.post(url, {"answer": question.correct_letters}, content_type="application/json")
    assert right.status_code == 200 and right.json()["correct"] is True
    missed = client.post(url, {"answer": [wrong["letter"]]}, content_type="application/json")
    body = missed.json()
    assert body["correct"] is False
    picked = next(c for c in body["choices"] if c["picked"])
    assert picked["explanation"] == wrong["explanation"]
    assert body["explanation"] == question.explanation
    assert Learner.objects.count() == 0 and Review.objects.count() == 0
    assert not missed.cookies
    # A choice may be named by the id the API lists, as well as by its letter.
    by_id = client.post(url, {"answer": [wrong["id"]]}, content_type="application/json").json()
    assert by_id == body


def test_a_letter_is_a_letter_even_where_a_choice_has_that_letter_for_its_id(client, demo):
    question = demo.questions.get(position=2)
    choices = question.labelled_choices
    # Lesson files allow ids of one hex digit: the first choice's id is "b", another's letter B.
    question.choices = [c | {"id": "b"} if n == 0 else c for n, c in enumerate(question.choices)]
    question.save()
    url = f"/api/v1/lessons/{SEED}/questions/2/check"
    picked = client.post(url, {"answer": ["b"]}, content_type="application/json").json()
    assert [c["letter"] for c in picked["choices"] if c["picked"]] == ["B"]
    assert choices[0]["letter"] == "A"


@pytest.mark.parametrize(
    ("url", "body", "status", "message"),
    [
        (f"/api/v1/lessons/{SEED}/questions/1/check", {"answer": ["E"]}, 400, "not one of"),
        (f"/api/v1/lessons/{SEED}/questions/1/check", {"answer": ["Z"]}, 400, "not one of"),
        (f"/api/v1/lessons/{SEED}/questions/1/check", {"answer": []}, 400, "No answer was"),
        (f"/api/v1/lessons/{SEED}/questions/1/check", {"answer": ["A" * 201]}, 422, "not valid"),
        (
            f"/api/v1/lessons/{SEED}/questions/1/check",
            {"answer": ["Pipeline parallelism"]},
            400,
            "“PIPELINE PAR” is not one of this question's choices (they are A, B, C, D)",
        ),
        (f"/api/v1/lessons/{SEED}/questions/1/check", "nonsense", 400, "Cannot parse"),
        (f"/api/v1/lessons/{SEED}/questions/9/check", {"answer": ["A"]}, 404, "no question 9"),
        ("/api/v1/lessons/mt_0000000000/questions/1/check", {"answer": ["A"]}, 404, "No published"),
    ],
)
def test_bad_requests_get_json_messages(client, demo, url, body, status, message):
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == status
    assert message in response.json()["detail"]


def test_an_answer_of_the_wrong_shape_names_the_field_and_its_status_is_documented(client, demo):
    """The learners' walk of 2026-12-06: {"answer": "B"} got an undocumented 422 that spoke of
    "body.body.answer"."""
    url = f"/api/v1/lessons/{SEED}/questions/1/check"
    response = client.post(url, {"answer": "B"}, content_type="application/json")
    detail = response.json()["detail"]
    assert response.status_code == 422
    assert detail == "The request is not valid: answer: Input should be a valid list."
    check = client.get("/openapi.json").json()["paths"][
        "/api/v1/lessons/{public_id}/questions/{number}/check"
    ]
    assert "422" in check["post"]["responses"]
    search = client.get("/api/v1/search", {"q": "a" * 2001})
    assert search.status_code == 422 and search.json()["detail"].startswith("The request is not")
    assert "q: " in search.json()["detail"] and "query" not in search.json()["detail"]


def test_unknown_and_draft_lessons_are_404_json(client, db):
    draft = make_lesson(status=Lesson.Status.DRAFT)
    for public_id in ("mt_0000000000", draft.public_id):
        response = client.get(f"/api/v1/lessons/{public_id}")
        assert response.status_code == 404
        assert "No published lesson" in response.json()["detail"]


def test_the_api_never_errors_and_keeps_its_schema(demo, settings):
    """Property-based: schemathesis generates requests for every operation from /openapi.json
    and checks each response: no 5xx, and every response matches its documented schema."""
    # schemathesis 4.32 and newer send `Host: localhost` to the WSGI application.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost"]
    # As Django's test client does: keep the test's database connection open between requests.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        _exercise_every_operation()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _exercise_every_operation() -> None:
    api = schemathesis.openapi.from_wsgi("/openapi.json", get_wsgi_application())
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) == 6
    for operation in operations:

        @given(case=operation.as_strategy(), real=st.booleans(), number=st.integers(1, 8))
        @settings(
            max_examples=40,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        def exercise(case, real, number):
            # Half the cases aim at the seed lesson, so they get past the 404s into the code.
            if real and case.path_parameters:
                case.path_parameters["public_id"] = SEED
                if "number" in case.path_parameters:
                    case.path_parameters["number"] = number
            # A schema-valid letter can still name no choice of that question: a documented 400.
            case.call_and_validate(excluded_checks=[positive_data_acceptance])

        exercise()


CHECK = f"/api/v1/lessons/{SEED}/questions/1/check"


def assert_json_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert message in response.json()["detail"]


def test_a_body_over_the_form_limit_is_a_413_json_message(client, demo, settings):
    body = b'{"answer": ["B"], "padding": "' + b"a" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE + b'"}'
    response = client.post(CHECK, body, content_type="application/json")
    assert_json_error(response, 413, "too large: at most 256 KB")


def test_a_body_over_the_request_limit_is_a_413_json_message(client, db, settings):
    body = b"a" * (settings.MAX_REQUEST_BYTES + 1)
    response = client.post(CHECK, body, content_type="application/json")
    assert_json_error(response, 413, "too large: at most 6 MB")


def test_outside_the_api_a_body_over_the_request_limit_stays_plain_text(client, db, settings):
    response = client.post("/progress/import", b"a" * (settings.MAX_REQUEST_BYTES + 1), "x/y")
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize("method", ["get", "put", "delete", "patch", "options"])
def test_a_method_an_address_does_not_take_is_a_405_json_message(client, demo, method):
    response = getattr(client, method)(CHECK)
    assert_json_error(response, 405, f"does not take {method.upper()}; it takes POST")
    assert response["Allow"] == "POST"


def test_head_is_answered_where_get_is_so_link_checkers_find_the_api(client, demo):
    for path in ("/api/v1/lessons", "/api/v1/subjects", "/api/v1/search?q=pipeline"):
        get, head = client.get(path), client.head(path)
        assert (head.status_code, head.content) == (200, b""), path
        assert head["Content-Type"] == get["Content-Type"] == "application/json; charset=utf-8"
    assert client.head(CHECK).status_code == 405  # only where GET is taken


@pytest.mark.parametrize("path", ["/api/v1/nothing", "/api/v1/lessons/x/y/z", "/api/v2/lessons"])
def test_an_unknown_api_address_is_a_404_json_message(client, db, path):
    assert_json_error(client.get(path), 404, "nothing at this address")


def test_a_request_for_another_host_is_a_400_json_message(client, db):
    response = client.get("/api/v1/lessons", headers={"Host": "evil.example"})
    assert_json_error(response, 400, "not valid")


def test_a_server_error_in_the_api_is_a_500_json_message(demo):
    # Choices the admin could never save, written straight into the database.
    demo.questions.filter(position=1).update(choices={"broken": True})
    response = Client(raise_request_exception=False).get(f"/api/v1/lessons/{SEED}/questions")
    assert_json_error(response, 500, "Something went wrong on our side")


@pytest.mark.parametrize(
    "path",
    ["/api/v1/lessons/%00", "/api/v1/lessons?q=%00", "/api/v1/lessons?subject=%00x"],
)
def test_nul_characters_never_reach_the_database(client, demo, path):
    assert client.get(path).status_code in (404, 422)


def test_a_check_of_part_of_the_right_answers_says_wrong_and_names_them_all(client, db):
    """An agent that sends one of a question's two right letters is told it is wrong, with both
    right letters and only its own choice marked as picked; with a wrong letter added, too."""
    lesson = make_lesson(questions=0)
    for position in range(1, 9):
        make_question(
            lesson,
            position=position,
            choices=[
                {"text": "Right", "correct": True, "explanation": ""},
                {"text": "Also right", "correct": True, "explanation": ""},
                {"text": "Wrong", "correct": False, "explanation": "It is not."},
            ],
        )
    url = f"/api/v1/lessons/{lesson.public_id}/questions/3/check"
    for letters in (["A"], ["B"], ["A", "B", "C"]):
        body = client.post(url, {"answer": letters}, content_type="application/json").json()
        assert (body["correct"], body["answer"]) == (False, ["A", "B"])
        assert [c["letter"] for c in body["choices"] if c["picked"]] == letters
    every_right_one = client.post(url, {"answer": ["B", "A"]}, content_type="application/json")
    assert every_right_one.json()["correct"] is True
