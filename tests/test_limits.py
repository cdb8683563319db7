"""Floods get 429 with Retry-After, large bodies 413; neither ever becomes a 500."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.utils.crypto import get_random_string

from lightmysky.models import RateLimitCounter
from lightmysky.ratelimit import Limit
from practice.models import Review
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer, current_question, practice_url

# The start of an hour: a test that needs one window to last does not straddle two.
WINDOW_START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def browser_at(address: str) -> Client:
    """A new browser, with a CSRF cookie of its own, at an address."""
    browser = Client(REMOTE_ADDR=address)
    browser.cookies["csrftoken"] = get_random_string(32)
    return browser


def guess_a_transfer_code(browser: Client) -> int:
    return browser.post("/progress/adopt", {"code": "ABCD-EFGH"}).status_code


def test_a_flood_of_answers_gets_429_with_retry_after(window_start, client, demo, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"answer": Limit(5, 50, 60)}
    statuses = []
    for _ in range(8):
        response = answer(client, demo, right=True)
        statuses.append(response.status_code)
    assert statuses == [302] * 5 + [429] * 3
    assert 0 < int(response["Retry-After"]) <= 60
    assert Review.objects.count() == 5


def test_a_browser_naming_a_session_that_is_gone_is_still_counted(window_start, demo, settings):
    # On PostgreSQL the count is sent with the session's read: it must not depend on a row.
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"answer": Limit(3, 50, 60)}
    browser = browser_at("198.51.100.20")
    gone = get_random_string(32, "abcdefghijklmnopqrstuvwxyz0123456789")
    _, token = current_question(Client(), practice_url(demo))
    statuses = []
    for _ in range(5):
        browser.cookies["sessionid"] = gone  # sent again, though each answer deletes it
        response = browser.post(practice_url(demo), {"token": token, "choice": "nothing shown"})
        statuses.append(response.status_code)
    assert 429 not in statuses[:3]
    assert statuses[3:] == [429, 429]
    assert not Review.objects.exists()


def test_the_address_budget_is_shared_by_browsers_behind_it(window_start, demo, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"answer": Limit(100, 3, 60)}
    statuses = []
    for _ in range(5):
        browser = Client()
        question, token = current_question(browser, practice_url(demo))
        statuses.append(
            browser.post(
                practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
            ).status_code
        )
    assert statuses == [302, 302, 302, 429, 429]


def test_api_checks_are_limited_per_address_with_a_json_message(
    window_start, client, demo, settings
):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"api_check": Limit(0, 2, 60)}
    url = "/api/v1/lessons/mt__e-JwIxHek/questions/1/check"
    codes = [client.post(url, {"answer": ["A"]}, content_type="application/json") for _ in range(3)]
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert "try again in" in codes[-1].json()["detail"]
    assert codes[-1]["Retry-After"]


def test_transfer_codes_cannot_be_guessed_by_brute_force(window_start, client, db, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(3, 30, 3600)}
    client.get("/progress")  # a browser posts from the page that gave it its CSRF cookie
    codes = [
        client.post("/progress/adopt", {"code": f"AAAA-AAA{n}"}).status_code for n in range(2, 7)
    ]
    assert codes == [400, 400, 400, 429, 429]


def test_a_scanned_codes_check_counts_as_a_guess(window_start, client, db, settings):
    """The page a QR code opens says whether its code works: guessing through it is limited
    like guessing through the form."""
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(3, 30, 3600)}
    client.get("/progress")  # the browser's cookie, which the per-browser count goes by
    codes = [client.get(f"/progress/adopt?code=AAAA-AAA{n}").status_code for n in range(2, 7)]
    assert codes == [400, 400, 400, 429, 429]
    assert client.get("/progress/adopt").status_code == 200  # no code: the form, not a guess


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
    # in the site's words, not Django's bare "Bad Request (400)" (fuzzing review of stop 71)
    html = response.content.decode()
    assert "The form sent more than the 1,000 fields a form may send." in html
    assert "Nothing was recorded" in html and 'id="main"' in html


def test_a_form_of_too_much_text_says_so(client, demo):
    response = client.post(practice_url(demo), {"a": "x" * 300_000})
    assert response.status_code == 400
    said = "The form sent more than the 256 KB of text a form may send. Nothing was recorded."
    assert said in response.content.decode()
    assert not Review.objects.exists()
    # Sent by htmx, it takes the place of the card it was to replace, not a page inside it.
    headers = {"HX-Request": "true", "HX-Target": "practice-card"}
    swapped = client.post(practice_url(demo), {"a": "x" * 300_000}, headers=headers)
    html = swapped.content.decode()
    assert swapped.status_code == 400 and html.startswith('<section id="practice-card"')
    assert said in html and "<header" not in html


@time_machine.travel(WINDOW_START)
def test_a_client_at_its_limit_is_still_refused_after_a_flood_from_other_clients(db, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(3, 5, 3600)}
    guesser = browser_at("198.51.100.7")
    assert [guess_a_transfer_code(guesser) for _ in range(4)] == [400, 400, 400, 429]
    second_browser = browser_at("198.51.100.7")
    assert [guess_a_transfer_code(second_browser) for _ in range(2)] == [400, 429]

    flood = [
        guess_a_transfer_code(browser_at(f"10.0.{n // 250}.{n % 250 + 1}")) for n in range(500)
    ]
    assert flood == [400] * 500  # each counted, under a new key

    assert guess_a_transfer_code(guesser) == 429
    assert guess_a_transfer_code(browser_at("198.51.100.7")) == 429


def test_prune_counters_deletes_ended_windows_and_keeps_the_current_one(db, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(2, 30, 60)}
    guesser = browser_at("198.51.100.7")
    with time_machine.travel(WINDOW_START, tick=False):
        assert [guess_a_transfer_code(guesser) for _ in range(3)] == [400, 400, 429]
        assert "Removed 0 " in run_prune_counters()
        assert guess_a_transfer_code(guesser) == 429

    with time_machine.travel(WINDOW_START.replace(minute=1), tick=False):
        assert "Removed 2 " in run_prune_counters()  # the browser's and the address's
        assert not RateLimitCounter.objects.exists()
        assert guess_a_transfer_code(guesser) == 400


def run_prune_counters() -> str:
    out = io.StringIO()
    call_command("prune_counters", stdout=out)
    return out.getvalue()


def test_with_a_redis_cache_url_the_counters_live_in_redis_until_their_window_ends(
    db, settings, redis_counters
):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(2, 30, 60)}
    guesser = browser_at("198.51.100.7")
    assert [guess_a_transfer_code(guesser) for _ in range(3)] == [400, 400, 429]
    keys = redis_counters.keys(f"{settings.CACHE_KEY_PREFIX}:*")
    assert len(keys) == 2
    assert all(0 < redis_counters.ttl(key) <= 61 for key in keys)
    assert not RateLimitCounter.objects.exists()


def test_a_huge_forwarded_address_is_counted_not_a_500(db, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(10, 2, 3600)}
    spoofer = browser_at("127.0.0.1")  # nginx, whose X-Forwarded-For is read
    spoofed = {"HTTP_X_FORWARDED_FOR": "9" * 5000}
    codes = [
        spoofer.post("/progress/adopt", {"code": "ABCD-EFGH"}, **spoofed).status_code
        for _ in range(3)
    ]
    assert codes == [400, 400, 429]
