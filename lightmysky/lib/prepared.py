"""PostgreSQL keeps each connection's prepared statements (settings.postgres_statement_options).
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


def close_after_stale_plan(sender, request=None, **kwargs) -> None:
    """A `got_request_exception` receiver."""
    error = sys.exc_info()[1]
    cause = getattr(error, "__cause__", None)
    if isinstance(error, DatabaseError) and getattr(cause, "sqlstate", "") == FEATURE_NOT_SUPPORTED:
        for connection in connections.all(initialized_only=True):
            connection.close()
