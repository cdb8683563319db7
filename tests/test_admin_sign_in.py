"""The admin's sign-in: failures are limited per name and per address, and a signed-in session is
short, while an anonymous learner's stays long."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.hashers import MD5PasswordHasher
from django.test import Client

from lightmysky.models import RateLimitCounter
from tests.practice.helpers import answer

# Five minutes into a 15-minute window of the sign-in limit: a lock lasts its last ten.
WINDOW_START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
FIVE_MINUTES_IN = WINDOW_START + timedelta(minutes=5)
PASSWORD = "a-long-password"  # the `editor` fixture's
WRONG = (
    "Please enter the correct username and password for a staff account. "
    "Note that both fields may be case-sensitive."
)
LOCKED = "Too many failed sign-ins for this name or from this address. Try again in 10 minutes."


class CountingHasher(MD5PasswordHasher):
    """A fast hasher that counts the passwords it hashes: checking one, or, for a name no account
    has, the stand-in Django hashes so that both take as long."""

    hashed = 0

    def encode(self, password, salt):
        CountingHasher.hashed += 1
        return super().encode(password, salt)


@pytest.fixture(autouse=True)
def counting_hasher(settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    CountingHasher.hashed = 0


def sign_in(username: str, password: str, *, address: str = "198.51.100.7", browser=None):
    """A browser at `address` signs in as a person does: the form, then its post."""
    browser = browser or Client(REMOTE_ADDR=address)
    assert browser.get("/admin/login/").status_code == 200
    return browser.post(
        "/admin/login/?next=/admin/",
        {"username": username, "password": password, "next": "/admin/"},
    )


def error_note(response) -> str:
    """The message the login page shows above its form."""
    found = re.search(r'<p class="errornote">(.*?)</p>', response.content.decode(), re.S)
    return " ".join(found[1].split()) if found else ""


def signed_in(browser: Client) -> bool:
    return browser.get("/admin/").status_code == 200


@time_machine.travel(FIVE_MINUTES_IN, tick=False)
def test_five_failures_lock_a_name_and_the_page_says_for_how_long(editor):
    failures = [sign_in("ada", f"wrong-{n}", address=f"198.51.100.{n}") for n in range(5)]
    assert [(r.status_code, error_note(r)) for r in failures] == [(200, WRONG)] * 5

    refused = sign_in("ada", "wrong-again", address="203.0.113.9")
    assert (refused.status_code, error_note(refused)) == (429, LOCKED)
    assert refused["Retry-After"] == str(10 * 60)
    browser = Client(REMOTE_ADDR="203.0.113.10")
    right_but_locked = sign_in("ada", PASSWORD, browser=browser)
    assert (right_but_locked.status_code, error_note(right_but_locked)) == (429, LOCKED)
    assert not signed_in(browser)
    # Another name from the same addresses is not locked.
    assert error_note(sign_in("grace", "wrong", address="198.51.100.0")) == WRONG


def test_after_the_stated_wait_the_right_password_signs_in(editor):
    with time_machine.travel(FIVE_MINUTES_IN, tick=False):
        for n in range(6):
            last = sign_in("ada", f"wrong-{n}")
        assert error_note(last) == LOCKED
    with time_machine.travel(FIVE_MINUTES_IN + timedelta(minutes=10), tick=False):
        browser = Client(REMOTE_ADDR="198.51.100.7")
        response = sign_in("ada", PASSWORD, browser=browser)
        assert (response.status_code, response["Location"]) == (302, "/admin/")
        assert signed_in(browser)


def test_someone_elses_failures_do_not_lock_an_editor_out_of_the_browser_they_used_before(editor):
    own = Client(REMOTE_ADDR="198.51.100.7")
    with time_machine.travel(WINDOW_START - timedelta(days=3), tick=False):
        assert sign_in("ada", PASSWORD, browser=own).status_code == 302
        assert own.cookies["admin_known_browser"]["httponly"]
        own.post("/admin/logout/")
    with time_machine.travel(FIVE_MINUTES_IN, tick=False):
        for n in range(6):  # a stranger locks the name "ada" for every new browser
            sign_in("ada", f"wrong-{n}", address=f"203.0.113.{n}")
        assert error_note(sign_in("ada", PASSWORD, address="198.51.100.8")) == LOCKED
        # A browser that signed in as ada before is counted on its own, and gets in.
        assert sign_in("ada", PASSWORD, browser=own).status_code == 302
        assert signed_in(own)
        own.post("/admin/logout/")
        # Its own failures are still limited, five a quarter hour, as a name's are.
        mistakes = [error_note(sign_in("ada", f"typo-{n}", browser=own)) for n in range(6)]
        assert mistakes == [WRONG] * 5 + [LOCKED]
        # The cookie is for its name only, and a copy that was tampered with is no cookie.
        stranger = Client(REMOTE_ADDR="198.51.100.9")
        stranger.cookies["admin_known_browser"] = own.cookies["admin_known_browser"].value + "x"
        assert error_note(sign_in("ada", PASSWORD, browser=stranger)) == LOCKED
        for n in range(6):
            sign_in("grace", f"wrong-{n}", address=f"203.0.113.{n + 10}")
        assert error_note(sign_in("grace", "wrong", browser=own)) == LOCKED


def test_a_known_browsers_failures_still_count_against_the_name_and_a_new_password_voids_it(
    editor,
):
    own = Client(REMOTE_ADDR="198.51.100.7")
    with time_machine.travel(WINDOW_START - timedelta(days=3), tick=False):
        assert sign_in("ada", PASSWORD, browser=own).status_code == 302
        own.post("/admin/logout/")
    with time_machine.travel(FIVE_MINUTES_IN, tick=False):
        # Someone who once signed in guesses from that browser: the name locks for the others.
        for n in range(5):
            sign_in("ada", f"guess-{n}", browser=own)
        assert error_note(sign_in("ada", PASSWORD, address="203.0.113.20")) == LOCKED
    with time_machine.travel(FIVE_MINUTES_IN + timedelta(minutes=15), tick=False):
        editor.set_password("a-new-long-password")
        editor.save()
        for n in range(6):
            sign_in("ada", f"wrong-{n}", address=f"203.0.113.{n}")
        # The cookie was for the old password: this browser meets the name's lock like any other.
        assert error_note(sign_in("ada", "a-new-long-password", browser=own)) == LOCKED


def test_a_sign_in_with_an_unsafe_next_address_lands_in_the_admin(editor):
    browser = Client()
    assert browser.get("/admin/login/").status_code == 200
    response = browser.post(
        "/admin/login/", {"username": "ada", "password": PASSWORD, "next": "//evil.example/"}
    )
    assert (response.status_code, response["Location"]) == (302, "/admin/")


@time_machine.travel(FIVE_MINUTES_IN, tick=False)
def test_twenty_failures_lock_an_address_whatever_the_names(editor):
    names = [f"guess{n}" for n in range(20)]
    assert [error_note(sign_in(name, "wrong")) for name in names] == [WRONG] * 20
    assert error_note(sign_in("ada", PASSWORD)) == LOCKED
    # An IPv6 address counts as its /64: the next address in it is as locked.
    for n in range(20):
        sign_in(f"guess{n}", "wrong", address=f"2001:db8:7:7::{n + 1:x}")
    assert error_note(sign_in("ada", PASSWORD, address="2001:db8:7:7:ffff::1")) == LOCKED
    # Elsewhere, the right password still signs in.
    assert sign_in("ada", PASSWORD, address="203.0.113.9").status_code == 302


@time_machine.travel(FIVE_MINUTES_IN, tick=False)
def test_a_name_no_account_has_is_locked_the_same_way_with_the_same_work(editor):
    def hashed_by(username: str, password: str) -> int:
        before = CountingHasher.hashed
        sign_in(username, password, address="203.0.113.50")
        return CountingHasher.hashed - before

    seen = {}
    for username in ("ada", "nobody"):
        pages = [sign_in(username, f"wrong-{n}", address=f"198.51.100.{n}") for n in range(6)]
        seen[username] = [(r.status_code, error_note(r)) for r in pages]
    assert seen["ada"] == seen["nobody"] == [(200, WRONG)] * 5 + [(429, LOCKED)]
    # A refused sign-in checks no password, for either name.
    assert hashed_by("ada", PASSWORD) == hashed_by("nobody", PASSWORD) == 0
    # A failed one hashes once either way: for a name no account has, Django hashes a stand-in.
    assert hashed_by("grace", "wrong") == hashed_by("ada2", "wrong") == 1


@time_machine.travel(FIVE_MINUTES_IN, tick=False)
def test_a_success_is_not_counted_as_a_failure_nor_forgives_one(editor):
    for n in range(4):
        sign_in("ada", f"wrong-{n}")
    assert sign_in("ada", PASSWORD).status_code == 302
    assert error_note(sign_in("ada", "wrong-4")) == WRONG  # the fifth failure
    assert error_note(sign_in("ada", PASSWORD)) == LOCKED


def test_with_the_counters_in_redis_the_limit_and_the_take_back_hold(editor, redis_counters):
    # Redis expires keys by its own clock: a window that has not ended by it.
    tomorrow = datetime.now(UTC).replace(minute=5, second=0, microsecond=0) + timedelta(days=1)
    with time_machine.travel(tomorrow, tick=False):
        for n in range(4):
            sign_in("ada", f"wrong-{n}")
        assert sign_in("ada", PASSWORD).status_code == 302
        assert error_note(sign_in("ada", "wrong-4")) == WRONG
        assert error_note(sign_in("ada", PASSWORD)) == LOCKED
    assert not RateLimitCounter.objects.exists()


@time_machine.travel(FIVE_MINUTES_IN, tick=False)
def test_the_name_is_counted_without_regard_to_case(editor):
    for n in range(5):
        sign_in("ada" if n % 2 else "ADA", f"wrong-{n}")
    assert error_note(sign_in("Ada", PASSWORD)) == LOCKED


@time_machine.travel(WINDOW_START, tick=False)
def test_a_signed_in_session_lasts_12_hours_while_a_learners_lasts_400_days(editor, demo):
    browser = Client()
    response = sign_in("ada", PASSWORD, browser=browser)
    assert response.cookies["sessionid"]["max-age"] == 12 * 60 * 60
    learner = Client()
    assert answer(learner, demo, right=True).status_code == 302
    assert learner.cookies["sessionid"]["max-age"] == 400 * 24 * 60 * 60


def test_a_signed_in_session_ends_after_12_hours_without_an_admin_page(editor):
    browser = Client()
    with time_machine.travel(WINDOW_START, tick=False) as clock:
        assert sign_in("ada", PASSWORD, browser=browser).status_code == 302
        for _ in range(3):  # each admin page starts the 12 hours again
            clock.shift(timedelta(hours=11, minutes=59))
            assert signed_in(browser)
        clock.shift(timedelta(hours=12, minutes=1))
        response = browser.get("/admin/")
        assert (response.status_code, response["Location"]) == (302, "/admin/login/?next=/admin/")


def test_a_signed_in_session_ends_14_days_after_sign_in_however_busy(editor):
    browser = Client()
    with time_machine.travel(WINDOW_START, tick=False) as clock:
        assert sign_in("ada", PASSWORD, browser=browser).status_code == 302
        for _ in range(30):  # an admin page every 11 hours: 13 days and 18 hours
            clock.shift(timedelta(hours=11))
            assert signed_in(browser)
        last = browser.get("/admin/")
        assert last.cookies["sessionid"]["max-age"] == 6 * 60 * 60  # to the 14th day, not 12 h
        clock.shift(timedelta(hours=6, minutes=1))
        assert not signed_in(browser)
        assert sign_in("ada", PASSWORD, browser=browser).status_code == 302
        assert signed_in(browser)
