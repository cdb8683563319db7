"""PostgreSQL keeps each connection's prepared statements (settings.postgres_statement_options).

Each is planned once. Left to itself, PostgreSQL plans a prepared statement afresh on every run
whenever the plan it would keep looks dearer than those it made for the values given. On the
bench's data, where a few learners hold up to 10,000 items, the statement that reads a learner's
memories with the header's counts (every learner's lesson and practice page) was planned again
on every run: 0.2 ms of the database's time, twice the run itself. Every statement the site
repeats reads by a learner, a lesson or a key through an index, which one plan serves for all
values.

A migration that changes a column's type makes a statement prepared before it fail with
"cached plan must not change result type" on every later run. psycopg forgets its prepared
statements only on a rollback or on DDL it runs itself, never on another process's: a page read
outside a transaction would fail on that connection until the worker is reloaded. Closing the
connection after such a failure costs one failed request per worker instead; the next request
connects afresh."""

from __future__ import annotations

import sys

from django.db import DatabaseError, connections

FEATURE_NOT_SUPPORTED = "0A000"  # the SQLSTATE of "cached plan must not change result type"


def plan_prepared_statements_once(sender, connection, **kwargs) -> None:
    """A `connection_created` receiver: on PostgreSQL with prepared statements on, each is
    planned once, for every value (`plan_cache_mode`)."""
    if connection.vendor != "postgresql":
        return
    if connection.settings_dict["OPTIONS"].get("prepare_threshold") is None:
        return
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")


def close_after_stale_plan(sender, request=None, **kwargs) -> None:
    """A `got_request_exception` receiver."""
    error = sys.exc_info()[1]
    cause = getattr(error, "__cause__", None)
    if isinstance(error, DatabaseError) and getattr(cause, "sqlstate", "") == FEATURE_NOT_SUPPORTED:
        for connection in connections.all(initialized_only=True):
            connection.close()
