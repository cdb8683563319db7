"""On SQLite, the site's writers take turns on a lock file beside the database
(lightmysky.sqlite_backend): one waiting for another is woken the moment it is done, instead
of sleeping in SQLite's busy handler. Readers never wait for it."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, transaction
from django.test import Client

from lessons.models import ProblemReport
from practice.models import Learner
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer, practice_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's writers only"),
]


def lock_path() -> str:
    return f"{connection.settings_dict['NAME']}-writers.lock"


def turn_is_free() -> bool:
    """Whether another writer could take its turn now (tried without waiting)."""
    descriptor = os.open(lock_path(), os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)  # lets go, if taken
    return True


@contextmanager
def another_writers_turn() -> Iterator[None]:
    """Hold the writers' turn, as another process writing would."""
    descriptor = os.open(lock_path(), os.O_RDONLY)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(descriptor)


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


def test_a_transaction_holds_the_writers_turn_until_it_commits():
    connection.ensure_connection()
    assert turn_is_free()
    with transaction.atomic():
        Learner.objects.create()
        assert not turn_is_free()
    assert turn_is_free()
    assert Learner.objects.count() == 1


def test_a_transaction_that_fails_lets_go_of_the_turn_and_writes_nothing():
    with pytest.raises(RuntimeError), transaction.atomic():
        Learner.objects.create()
        raise RuntimeError("the request failed half-way")
    assert turn_is_free()
    assert not Learner.objects.exists()


def test_closing_a_connection_in_a_transaction_lets_go_of_the_turn():
    """As when a worker closes the connection of a request that never finished its
    transaction: the next writer need not wait for a commit that will never come."""
    written, close = threading.Event(), threading.Event()

    def left_open() -> None:
        transaction.atomic().__enter__()
        Learner.objects.create()
        written.set()
        close.wait(timeout=10)
        connection.close()

    thread = threading.Thread(target=left_open, daemon=True)
    thread.start()
    assert written.wait(timeout=10)
    assert not turn_is_free()
    close.set()
    thread.join(timeout=10)
    assert turn_is_free()


def test_an_answer_waits_for_the_writer_ahead_of_it_and_is_then_recorded(demo):
    browser = Client()
    browser.get(practice_url(demo))
    with another_writers_turn():
        thread, responses = in_thread(lambda: answer(browser, demo, right=True))
        thread.join(timeout=0.5)
        assert thread.is_alive(), "the answer did not wait for the writer ahead of it"
    thread.join(timeout=10)
    assert responses and responses[0].status_code == 302
    assert Learner.objects.get().review_set.count() == 1


def test_a_write_outside_a_transaction_waits_its_turn_too(demo):
    """A problem report is written without a transaction of its own, as is the count its
    rate limit keeps."""
    form = {"kind": ProblemReport.Kind.choices[0][0], "message": "The second choice is blank."}
    with another_writers_turn():
        thread, responses = in_thread(lambda: Client().post(demo.get_report_url(), form))
        thread.join(timeout=0.5)
        assert thread.is_alive(), "the report did not wait for the writer ahead of it"
    thread.join(timeout=10)
    assert responses and responses[0].status_code == 302
    assert ProblemReport.objects.get().message == form["message"]


def test_a_write_returning_rows_is_over_before_the_next_writer_takes_its_turn():
    """SQLite's write lasts until the rows it returns are read. They are read before the turn
    is let go, so the next writer finds SQLite free, and the caller still gets them."""
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0, isolation_level=None)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                'INSERT INTO lightmysky_ratelimitcounter ("key", "window_end", "count")'
                ' VALUES (%s, %s, 1) RETURNING "key", "count"',
                ["answer:ip:192.0.2.1", 60],
            )
            assert turn_is_free()
            other.execute("BEGIN IMMEDIATE")  # "database is locked" if the write were not over
            other.execute("ROLLBACK")
            assert cursor.fetchone() == ("answer:ip:192.0.2.1", 1)
            assert cursor.fetchone() is None
    finally:
        other.close()


def test_pages_are_read_while_another_writer_has_its_turn(demo):
    with another_writers_turn():
        thread, responses = in_thread(lambda: Client().get(SEED_PATH))
        thread.join(timeout=10)
        assert responses and responses[0].status_code == 200


def test_a_lock_file_the_site_cannot_open_leaves_writers_to_sqlite(tmp_path, caplog):
    """Say a command run as another user left the file unreadable: the site still writes."""
    from lightmysky.sqlite_backend.base import DatabaseWrapper

    database = tmp_path / "site.sqlite3"
    (tmp_path / "site.sqlite3-writers.lock").mkdir()  # cannot be opened as a file, even by root
    wrapper = DatabaseWrapper(connection.settings_dict | {"NAME": database})
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("CREATE TABLE t (n INTEGER)")
            cursor.execute("INSERT INTO t VALUES (1)")
            cursor.execute("SELECT n FROM t")
            assert cursor.fetchall() == [(1,)]
    finally:
        wrapper.close()
    assert "busy handler" in caplog.text


@pytest.mark.parametrize("padding", [0, 10_000], ids=["remembered", "too long to remember"])
def test_a_statement_sent_again_reads_its_placeholders_and_percent_signs_the_same(padding):
    """Each statement's SQLite form is remembered (lightmysky.sqlite_backend): the second
    sending must mean what the first did, with other values."""
    statement = "SELECT '100%%', '%%s', %s" + " " * padding
    with connection.cursor() as cursor:
        for value in (1, 2):
            cursor.execute(statement, [value])
            assert cursor.fetchone() == ("100%", "%s", value)
        cursor.execute("SELECT %(value)s, '5%%'", {"value": 3})
        assert cursor.fetchone() == (3, "5%")


def test_a_remembered_statement_is_what_djangos_own_conversion_makes():
    """The site's cursor remembers Django's conversion of %s to ?, which it copies: a Django
    upgrade that changed the conversion would show here."""
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    from lightmysky.sqlite_backend.base import _in_qmark_style

    statements = [
        "SELECT %s",
        "SELECT '%%s', %s",
        "SELECT '100%%%s'",
        "SELECT %s%s",
        "x LIKE 'a%%'",
    ]
    with connection.cursor() as cursor:
        ours = cursor.cursor
        for statement in statements:
            assert ours.convert_query(statement) == SQLiteCursorWrapper.convert_query(
                ours, statement
            )
            remembered = _in_qmark_style.cache_info().hits
            ours.convert_query(statement)
            assert _in_qmark_style.cache_info().hits == remembered + 1


def test_rows_written_many_at_once_keep_their_values_and_percent_signs():
    """executemany goes through the same remembered conversion as execute."""
    from lightmysky.sqlite_backend.base import _in_qmark_style

    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE many_at_once (number INTEGER, note TEXT)")
        statement = "INSERT INTO many_at_once VALUES (%s, '50%%')"
        cursor.executemany(statement, [(1,), (2,)])
        remembered = _in_qmark_style.cache_info().hits
        cursor.executemany(statement, [(3,)])
        assert _in_qmark_style.cache_info().hits == remembered + 1
        cursor.execute("SELECT number, note FROM many_at_once ORDER BY number")
        assert cursor.fetchall() == [(1, "50%"), (2, "50%"), (3, "50%")]
        cursor.execute("DROP TABLE many_at_once")
