"""On PostgreSQL each connection keeps its prepared statements
(settings.postgres_statement_options). A migration that changes a column's type, run by
another process while the site serves, must cost a worker one failed request at most, not
every request until it is reloaded."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from tests.conftest import SEED_PATH, another_postgres_connection
from tests.practice.helpers import answer, practice_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def alter_version_column(to: str) -> None:
    """As `manage.py migrate` would, from a connection of its own."""
    with another_postgres_connection() as migrating:
        migrating.execute(f"ALTER TABLE lessons_contentversion ALTER COLUMN number TYPE {to}")


def test_a_column_type_changed_while_serving_fails_one_request_at_most(demo):
    browser = Client(raise_request_exception=False)
    for _ in range(6):  # often enough for the page's content-version query to be prepared
        assert browser.get(SEED_PATH).status_code == 200
    alter_version_column("numeric")
    try:
        statuses = [browser.get(SEED_PATH).status_code for _ in range(3)]
    finally:
        alter_version_column("bigint")
    assert statuses[1:] == [200, 200], statuses


def test_a_learners_pages_plan_each_statement_once(demo):
    """Prepared statements are planned once for every value, not again on each run."""
    browser = Client()
    answer(browser, demo, right=True)
    for _ in range(8):  # past the prepare threshold
        for path in (SEED_PATH, practice_url(demo), "/review"):
            assert browser.get(path).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        statements = cursor.fetchall()
    assert any("m.lesson_id" in statement for statement, _, _ in statements), statements
    assert all(custom == 0 and generic > 0 for _, generic, custom in statements), statements
