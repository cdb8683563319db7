"""Floods get 429 with Retry-After, large bodies 413; neither ever becomes a 500."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from lightmysky.lib.ratelimit import Limit
from practice.models import Review
from tests.conftest import SEED_PATH
from tests.practice.helpers import current_question, practice_url


def test_a_flood_of_answers_gets_429_with_retry_after(client, demo, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"answer": Limit(5, 50, 60)}
    statuses = []
    for _ in range(8):
        question, token = current_question(client, practice_url(demo))
        response = client.post(
            practice_url(demo), {"token": token, "choice": question.correct_letters}
        )
        statuses.append(response.status_code)
    assert statuses == [302] * 5 + [429] * 3
    assert 0 < int(response["Retry-After"]) <= 60
    assert Review.objects.count() == 5


def test_the_address_budget_is_shared_by_browsers_behind_it(demo, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"answer": Limit(100, 3, 60)}
    statuses = []
    for _ in range(5):
        browser = Client()
        question, token = current_question(browser, practice_url(demo))
        statuses.append(
            browser.post(
                practice_url(demo), {"token": token, "choice": question.correct_letters}
            ).status_code
        )
    assert statuses == [302, 302, 302, 429, 429]


def test_api_checks_are_limited_per_address_with_a_json_message(client, demo, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"api_check": Limit(0, 2, 60)}
    url = "/api/v1/lessons/mt__e-JwIxHek/questions/1/check"
    codes = [client.post(url, {"answer": ["A"]}, content_type="application/json") for _ in range(3)]
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert "try again in" in codes[-1].json()["detail"]
    assert codes[-1]["Retry-After"]


def test_transfer_codes_cannot_be_guessed_by_brute_force(client, db, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(3, 30, 3600)}
    client.get("/progress")  # a browser posts from the page that gave it its CSRF cookie
    codes = [
        client.post("/progress/adopt", {"code": f"AAAA-AAA{n}"}).status_code for n in range(2, 7)
    ]
    assert codes == [400, 400, 400, 429, 429]


def test_a_body_too_large_is_refused_with_413(client, db, settings):
    settings.MAX_REQUEST_BYTES = 1000
    response = client.post(
        "/progress/import", {"file": SimpleUploadedFile("big.json", b"x" * 5000)}
    )
    assert response.status_code == 413
    assert "too large" in response.content.decode()


def test_too_many_form_fields_are_a_400_not_a_500(client, demo):
    data = {f"field{n}": "x" for n in range(1500)}
    response = client.post(SEED_PATH + "/report", data)
    assert response.status_code == 400
