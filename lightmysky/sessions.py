"""The session engine: Django's database sessions, read in the query that reads the content
version.

Nearly every page reads both the browser's session and the content version (the key of every
cached page and lesson). Read apart they are two round trips to the database; here loading the
session also reads the version, and `ContentVersion.for_request` takes it from the session, so
a learner's page starts with one query. On PostgreSQL a write can ride along too
(`load_along_with`): a POST's rate-limit count is sent with the session's read. So can a read of
the learner's own rows (`load_with_learners_rows`): the session's row names its learner in a
`learner_id` column of the site's own (migration lightmysky.0003), which `save` keeps to the
learner the data names, so a learner's page is one statement. The session is
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
    "SELECT session_data, (SELECT number FROM {version} WHERE id = 1), expire_date > %s,"
    " learner_id FROM {session} WHERE session_key = %s"
)
# The same read after a statement that writes, whose rows come back as JSON. A statement in WITH
# runs once, to completion, whether or not the query reads its rows; the outer join gives one
# row also when the session is gone.
_SESSION_WITH_VERSION_ALONG = (
    "WITH along AS ({along})"
    " SELECT s.session_data, (SELECT number FROM {version} WHERE id = 1), s.expire_date > %s,"
    " s.learner_id, (SELECT coalesce(json_agg(along), '[]') FROM along)"
    " FROM (SELECT 1) AS one LEFT OUTER JOIN {session} s ON s.session_key = %s"
)
# The same read with a read of the session's learner's rows: `rows` names the learner as
# `SessionStore.LEARNER_ID` and gives at least one row (or none, which reads as the learner's
# having none). Each row of `rows` comes with the session's columns after its own; there is no
# row at all when the session is gone, and the rows' columns are null when it has expired.
_SESSION_WITH_VERSION_AND_ROWS = (
    "SELECT learners_rows.*, browser_session.session_data, browser_session.version,"
    " browser_session.live, browser_session.learner_id FROM"
    " (SELECT session_data, (SELECT number FROM {version} WHERE id = 1) AS version,"
    " expire_date > %s AS live, learner_id FROM {session} WHERE session_key = %s)"
    " AS browser_session"
    " LEFT OUTER JOIN LATERAL ({rows}) AS learners_rows ON browser_session.live"
)
_SESSION_COLUMNS = 4  # after the rows' own, as `_from_row` reads them


class SessionStore(db.SessionStore):
    # In a statement of `load_with_learners_rows`: the learner the session's row names.
    LEARNER_ID = "browser_session.learner_id"

    _content_version: int | None = None
    # The session row's learner_id column as read, which save() keeps to the data's learner.
    _learner_column: int | None = None
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
        them. None, with nothing run, when that cannot be (`_can_load_along`)."""
        if not self._can_load_along(using):
            return None
        connection = self._connection()
        sql, read_params = self._read(_SESSION_WITH_VERSION_ALONG, along=statement)
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, *read_params])
            *session_row, statement_rows = cursor.fetchone()
        # No session row (the outer join's nulls) reads as none found, as in _get_session_from_db.
        self._load_from_row(tuple(session_row) if session_row[0] is not None else None)
        return statement_rows

    def load_with_learners_rows(
        self, statement: str, params: Sequence[Any], *, using: str
    ) -> tuple[list[tuple], int | None] | None:
        """Run `statement`, a read of the rows of the learner the session's row names
        (`LEARNER_ID`), in the round trip that reads this session, and return its rows with the
        learner they are of: the caller uses them only if that is the learner the session's
        data names (a session saved before the column was added names none). None, with
        nothing run, when that cannot be (`_can_load_along`)."""
        if not self._can_load_along(using):
            return None
        connection = self._connection()
        sql, read_params = self._read(_SESSION_WITH_VERSION_AND_ROWS, rows=statement)
        with connection.cursor() as cursor:
            cursor.execute(sql, [*read_params, *params])
            rows = cursor.fetchall()
        self._load_from_row(tuple(rows[0][-_SESSION_COLUMNS:]) if rows else None)
        return [row[:-_SESSION_COLUMNS] for row in rows], self._learner_column

    def _can_load_along(self, using: str) -> bool:
        """Whether a statement on database `using` can be sent with this session's read: the
        session is not loaded yet, the browser named one, sessions live in that database, and
        it is PostgreSQL (SQLite has no round trip to save, nor writes in WITH or LATERAL)."""
        connection = self._connection()
        return (
            connection.alias == using
            and self.session_key is not None
            and not hasattr(self, "_session_cache")
            and connection.vendor == "postgresql"
        )

    def load(self) -> dict[str, Any]:
        return self._loaded(self._get_session_from_db())

    def _load_from_row(self, row: tuple | None) -> None:
        self._session_cache = self._loaded(self._from_row(row))

    def _loaded(self, stored) -> dict[str, Any]:
        """The data of the session row `stored` (or none), as `load` gives it. A row whose
        learner_id column is not the data's learner (saved before the column was added) is
        saved again at the end of the request, which sets it."""
        from practice.models import LEARNER_PK_SESSION_KEY

        data = self.decode(stored.session_data) if stored else {}
        if data.get(LEARNER_PK_SESSION_KEY) != self._learner_column:
            self.modified = True
        return data

    def _connection(self):
        return connections[router.db_for_read(self.model)]

    def _read(self, template: str, along: str = "", rows: str = "") -> tuple[str, list]:
        from lessons.models import ContentVersion

        ops = self._connection().ops
        sql = template.format(
            session=ops.quote_name(self.model._meta.db_table),
            version=ops.quote_name(ContentVersion._meta.db_table),
            along=along,
            rows=rows,
        )
        return sql, [ops.adapt_datetimefield_value(timezone.now()), self.session_key]

    def _from_row(self, row: tuple | None):
        """The session from (data, content version, unexpired), as Django's `load` wants it:
        None when the browser's session is gone or expired, which leaves it without a key."""
        if row is None or not row[2]:
            self.ended = row is None
            self._session_key = None
            return None
        session_data, version, _, self._learner_column = row
        self._content_version = version or 0
        return self.model(session_key=cast(str, self.session_key), session_data=session_data)

    def save(self, must_create: bool = False) -> None:
        """Django's save, with the row's learner_id column kept to the learner the data names
        (one more statement, only when that learner changes)."""
        from practice.models import LEARNER_PK_SESSION_KEY

        if must_create:  # a new row (a new session, or `cycle_key`'s), its column null
            self._learner_column = None
        super().save(must_create)
        learner_id = self.get(LEARNER_PK_SESSION_KEY)
        if learner_id != self._learner_column:
            connection = connections[router.db_for_write(self.model)]
            table = connection.ops.quote_name(self.model._meta.db_table)
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {table} SET learner_id = %s WHERE session_key = %s",
                    [learner_id, self.session_key],
                )
            self._learner_column = learner_id

    def content_version(self) -> int | None:
        """The content version read with this session (loading it if the browser named one), or
        None when no session row was read: a new browser, or an ended session."""
        if self.session_key is not None:
            self.keys()  # loads the session, and the version with it, once
        return self._content_version
