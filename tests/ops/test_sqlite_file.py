"""A SQLite file replaced or moved under running gunicorn workers (operators' review M3): the
workers reopen the file at the path instead of going on with the old one, and /readyz is red
while there is none."""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.error
import urllib.request

import pytest

from tests.ops.servers import gunicorn, manage, production_env

pytestmark = pytest.mark.skipif(
    os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="SQLite's file only"
)


def readiness(base: str) -> tuple[int, list[str]]:
    try:
        with urllib.request.urlopen(base + "/readyz", timeout=10) as response:
            return response.status, json.load(response)["problems"]
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)["problems"]


def test_workers_reopen_a_replaced_file_and_are_not_ready_while_it_is_missing(tmp_path):
    live = tmp_path / "site.sqlite3"
    env = production_env(f"sqlite:///{live}")
    manage(env, "migrate", "--no-input", "-v0")
    manage(env, "collectstatic", "--no-input", "-v0")  # the test alone must find the manifest
    # The replacement lacks the newest migration's record: a worker that reads it says so.
    replacement = tmp_path / "replacement.sqlite3"
    with sqlite3.connect(live) as source, sqlite3.connect(replacement) as copy:
        source.backup(copy)
        copy.execute(
            "DELETE FROM django_migrations WHERE id = (SELECT max(id) FROM django_migrations)"
        )
    source.close()
    copy.close()

    with gunicorn(env, workers=1) as base:
        assert readiness(base) == (200, [])  # the worker holds a connection to the live file

        os.replace(replacement, live)  # what `mv backup.sqlite3 site.sqlite3` does
        assert readiness(base) == (503, ["1 migration(s) not applied"])

        live.rename(tmp_path / "moved.sqlite3")
        status, problems = readiness(base)
        assert status == 503
        assert f"database file {live} is missing: moved or deleted while the site runs" in problems
        assert not live.exists()  # not made again, empty, by the check


def test_a_worker_with_no_connection_open_does_not_make_a_missing_file_again(tmp_path):
    live = tmp_path / "site.sqlite3"
    env = production_env(f"sqlite:///{live}", CONN_MAX_AGE="0")  # closed after each request
    manage(env, "migrate", "--no-input", "-v0")
    manage(env, "collectstatic", "--no-input", "-v0")
    with gunicorn(env, workers=1) as base:
        live.rename(tmp_path / "moved.sqlite3")
        status, problems = readiness(base)
    assert status == 503
    assert problems == [f"database file {live} is missing: moved or deleted while the site runs"]
    assert not live.exists()
