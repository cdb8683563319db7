"""The session engine: Django's database sessions, read in the query that reads the content
version.

Nearly every page reads both the browser's session and the content version (the key of every
cached page and lesson). Read apart they are two round trips to the database; here loading the
session also reads the version, and `ContentVersion.for_request` takes it from the session, so
a learner's page starts with one query. On PostgreSQL a write can ride along too
(`load_along_with`): a POST's rate-limit count is sent with the session's read. The session is
still read from the database on every request, so every server sees another's write at once,
and "Forget everything" (which deletes the row) ends the session everywhere; docs/performance.md
says why Django's `cached_db` engine would not, with the per-process cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

_SESSION_WITH_VERSION = (
    "SELECT session_data, (SELECT number FROM {version} WHERE id = 1), expire_date > %s"
    " FROM {session} WHERE session_key = %s"
)
# The same read after a statement that writes, whose rows come back as JSON. A statement in WITH
# runs once, to completion, whether or not the query reads its rows; the outer join gives one
# row also when the session is gone.
_SESSION_WITH_VERSION_ALONG = (
    "WITH along AS ({along})"
    " SELECT s.session_data, (SELECT number FROM {version} WHERE id = 1), s.expire_date > %s,"
    " (SELECT coalesce(json_agg(along), '[]') FROM along)"
    " FROM (SELECT 1) AS one LEFT OUTER JOIN {session} s ON s.session_key = %s"
)


class SessionStore(db.SessionStore):
    _content_version: int | None = None
    # The browser named a session that is gone, not merely expired: ended by "Forget
    # everything" (its row deleted at once), since its cookie lapses with its expiry.
    ended = False

    def _get_session_from_db(self):
        with self._connection().cursor() as cursor:
            # Written out, not built with the ORM: compiling the query cost more than running it.
            cursor.execute(*self._read(_SESSION_WITH_VERSION))
            return self._from_row(cursor.fetchone())

    def load_along_with(
        self, statement: str, params: Sequence[Any], *, using: str
    ) -> list[dict] | None:
        """Run `statement`, which writes and returns rows (INSERT … RETURNING, say), in the round
        trip that reads this session, and return its rows as dicts; the session is loaded with
        them. None, with nothing run, when that cannot be: the session is loaded already, the
        browser named none, sessions live in another database than `using` (the statement's)
        or the database is not PostgreSQL (SQLite cannot write in WITH)."""
        connection = self._connection()
        if (
            connection.alias != using
            or self.session_key is None
            or hasattr(self, "_session_cache")
            or connection.vendor != "postgresql"
        ):
            return None
        sql, read_params = self._read(_SESSION_WITH_VERSION_ALONG, along=statement)
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, *read_params])
            *session_row, statement_rows = cursor.fetchone()
        # No session row (the outer join's nulls) reads as none found, as in _get_session_from_db.
        stored = self._from_row(tuple(session_row) if session_row[0] is not None else None)
        self._session_cache = self.decode(stored.session_data) if stored else {}  # as load()
        return statement_rows

    def _connection(self):
        return connections[router.db_for_read(self.model)]

    def _read(self, template: str, along: str = "") -> tuple[str, list]:
        from lessons.models import ContentVersion

        ops = self._connection().ops
        sql = template.format(
            session=ops.quote_name(self.model._meta.db_table),
            version=ops.quote_name(ContentVersion._meta.db_table),
            along=along,
        )
        return sql, [ops.adapt_datetimefield_value(timezone.now()), self.session_key]

    def _from_row(self, row: tuple | None):
        """The session from (data, content version, unexpired), as Django's `load` wants it:
        None when the browser's session is gone or expired, which leaves it without a key."""
        if row is None or not row[2]:
            self.ended = row is None
            self._session_key = None
            return None
        session_data, version, _ = row
        self._content_version = version or 0
        return self.model(session_key=cast(str, self.session_key), session_data=session_data)

    def content_version(self) -> int | None:
        """The content version read with this session (loading it if the browser named one), or
        None when no session row was read: a new browser, or an ended session."""
        if self.session_key is not None:
            self.keys()  # loads the session, and the version with it, once
        return self._content_version
