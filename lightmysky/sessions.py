"""The session engine: Django's database sessions, read in the query that reads the content
version.

Nearly every page reads both the browser's session and the content version (the key of every
cached page and lesson). Read apart they are two round trips to the database; here loading the
session also reads the version, and `ContentVersion.for_request` takes it from the session, so
a learner's page starts with one query. On PostgreSQL a write can ride along too
(`load_along_with`): a POST's rate-limit count is sent with the session's read. So can a read of
the learner's own rows (`read_along`): the session's row names its learner in a `learner_id`
column of the site's own (migration lightmysky.0003), which `save` keeps to the learner the data
names, so a learner's page is one statement, and an answer's count and reads are one. The
session is still read from the database on every request, so every server sees another's write
at once, and "Forget everything" (which deletes the row) ends the session everywhere;
docs/performance.md says why Django's `cached_db` engine would not, with the per-process cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

# The session's row with the content version, whether it has expired, and the learner it names.
_SESSION = (
    "(SELECT session_data, (SELECT number FROM {version} WHERE id = 1) AS version,"
    " expire_date > %s AS live, learner_id FROM {session} WHERE session_key = %s)"
    " AS browser_session"
)
_SESSION_COLUMNS = 4  # as `_from_row` reads them
# After a statement that writes (`along`), whose rows come back as JSON in the last column. A
# statement in WITH runs once, to completion, whether or not the query reads its rows; the outer
# join gives one row also when the session is gone.
_ALONG = "WITH along AS ({along}) "
_ALONG_ROWS = "(SELECT coalesce(json_agg(along), '[]') FROM along)"
# With a read of the session's learner's rows (`rows`, naming the learner as
# `SessionStore.LEARNER_ID`): each of its rows comes with the session's columns after its own,
# and there is one row of nulls in its place when it gives none or the session has expired.
_LEARNERS_ROWS = " LEFT OUTER JOIN LATERAL ({rows}) AS learners_rows ON browser_session.live"


class SessionStore(db.SessionStore):
    # In a statement read along with the session (`read_along`): the learner its row names.
    LEARNER_ID = "browser_session.learner_id"

    _content_version: int | None = None
    # The session row's learner_id column as read, which save() keeps to the data's learner.
    _learner_column: int | None = None
    # The browser named a session that is gone, not merely expired: ended by "Forget
    # everything" (its row deleted at once), since its cookie lapses with its expiry.
    ended = False

    # A read of the learner's rows asked for (`read_along`), and once made: the statement, its
    # params, its rows and the learner they are of (the column as it was read).
    _rows_to_read: tuple[str, list] | None = None
    _rows_read: tuple[str, list, list[tuple], int | None] | None = None

    def _get_session_from_db(self):
        return self._from_row(self._read()[0])

    def load_along_with(
        self, statement: str, params: Sequence[Any], *, using: str
    ) -> list[dict] | None:
        """Run `statement`, which writes and returns rows (INSERT … RETURNING, say), in the round
        trip that reads this session, and return its rows as dicts; the session is loaded with
        them. None, with nothing run, when that cannot be (`_can_load_along`)."""
        if not self._can_load_along(using):
            return None
        session_row, written = self._read(along=(statement, params))
        self._session_cache = self._loaded(self._from_row(session_row))
        return written

    def read_along(self, statement: str, params: Sequence[Any], *, using: str) -> bool:
        """Have the read of this session, when it comes, also run `statement`: a read of the
        rows of the learner the session's row names (`LEARNER_ID`), giving at least one row.
        False, with nothing asked, when that cannot be (`_can_load_along`)."""
        if not self._can_load_along(using):
            return False
        self._rows_to_read = (statement, list(params))
        return True

    def rows_read_along(
        self, statement: str, params: Sequence[Any], *, learner_id: int
    ) -> list[tuple] | None:
        """The rows of `statement` with `params`, if the session's read ran it (`read_along`)
        for the learner `learner_id`: the caller passes the learner the session's data names,
        since the row's column may name none (saved before the column was added) or another.
        None otherwise, and when the session was gone."""
        read = self._read_along_for(statement, params)
        return read[0] if read and read[0] and read[1] == learner_id else None

    def load_with_learners_rows(
        self, statement: str, params: Sequence[Any], *, using: str
    ) -> tuple[list[tuple], int | None] | None:
        """Load this session with a read of its learner's rows (`read_along`) and return them
        with the learner they are of (for the caller to check, as `rows_read_along` does);
        None, with nothing run, when that cannot be. No rows when the session was gone."""
        if not self.read_along(statement, params, using=using):
            return None
        self.keys()  # loads the session
        return self._read_along_for(statement, params)

    def _read_along_for(
        self, statement: str, params: Sequence[Any]
    ) -> tuple[list[tuple], int | None] | None:
        if self._rows_read is None or self._rows_read[:2] != (statement, list(params)):
            return None
        return self._rows_read[2], self._rows_read[3]

    def _read(self, along: tuple[str, Sequence[Any]] | None = None) -> tuple[tuple | None, Any]:
        """Read the session's row in one statement, running the write `along` before it and the
        read `read_along` asked for with it. Return the session's columns (None when the row is
        gone) and the write's rows."""
        from lessons.models import ContentVersion

        # Written out, not built with the ORM: compiling the query cost more than running it.
        connection = self._connection()
        ops = connection.ops
        source = _SESSION.format(
            session=ops.quote_name(self.model._meta.db_table),
            version=ops.quote_name(ContentVersion._meta.db_table),
        )
        params = [ops.adapt_datetimefield_value(timezone.now()), self.session_key]
        if along:
            source = f"(SELECT 1) AS one LEFT OUTER JOIN {source} ON true"
        rows, self._rows_to_read = self._rows_to_read, None
        if rows:
            source += _LEARNERS_ROWS.format(rows=rows[0])
            params += rows[1]
        columns = f"{'learners_rows.*, ' if rows else ''}browser_session.*"
        sql = f"SELECT {columns}{', ' + _ALONG_ROWS if along else ''} FROM {source}"
        if along:
            sql = _ALONG.format(along=along[0]) + sql
            params = [*along[1], *params]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        width = len(fetched[0]) - _SESSION_COLUMNS - bool(along) if fetched else 0
        session_row = tuple(fetched[0][width : width + _SESSION_COLUMNS]) if fetched else None
        # The outer join's nulls, for a session that is gone, read as no row.
        if session_row is not None and session_row[0] is None:
            session_row = None
        if rows:
            learner = session_row[3] if session_row and session_row[2] else None
            self._rows_read = (*rows, [row[:width] for row in fetched], learner)
        return session_row, fetched[0][-1] if along else None

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
