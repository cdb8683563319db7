"""On SQLite, Django's own backend with `transaction_mode: IMMEDIATE` and a busy timeout: a writer
waits for the one ahead of it and is then recorded, and pages are read meanwhile (WAL)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection
from django.test import Client

from practice.models import Learner
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer, practice_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's writers only"),
]


@contextmanager
def another_writer() -> Iterator[None]:
    """Hold SQLite's write lock, as a request of another process in its transaction would."""
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def in_thread(work) -> tuple[threading.Thread, list]:
    """Run `work` in a thread with a database connection of its own; its result in the list."""
    results: list = []

    def run() -> None:
        try:
            results.append(work())
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, results


def test_the_database_is_in_wal_mode_with_a_busy_timeout():
    with connection.cursor() as cursor:
        assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert cursor.execute("PRAGMA busy_timeout").fetchone()[0] == 20_000


def test_an_answer_waits_for_the_writer_ahead_of_it_and_is_then_recorded(demo):
    browser = Client()
    browser.get(practice_url(demo))
    with another_writer():
        thread, responses = in_thread(lambda: answer(browser, demo, right=True))
        thread.join(timeout=0.5)
        assert thread.is_alive(), "the answer did not wait for the writer ahead of it"
    thread.join(timeout=25)
    assert responses and responses[0].status_code == 302
    assert Learner.objects.get().review_set.count() == 1


def test_pages_are_read_while_another_writer_holds_the_lock(demo):
    with another_writer():
        thread, responses = in_thread(lambda: Client().get(SEED_PATH))
        thread.join(timeout=10)
        assert responses and responses[0].status_code == 200
