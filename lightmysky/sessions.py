"""The session engine: Django's database sessions, read in the query that reads the content
version.

Nearly every page reads both the browser's session and the content version (the key of every
cached page and lesson). Read apart they are two round trips to the database; here loading the
session also reads the version, and `ContentVersion.for_request` takes it from the session, so
a learner's page starts with one query. The session is still read from the database on every
request, so every server sees another's write at once, and "Forget everything" (which deletes
the row) ends the session everywhere; docs/performance.md says why Django's `cached_db` engine
would not, with the per-process cache.
"""

from __future__ import annotations

from typing import cast

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

_SESSION_WITH_VERSION = (
    "SELECT session_data, (SELECT number FROM {version} WHERE id = 1), expire_date > %s"
    " FROM {session} WHERE session_key = %s"
)


class SessionStore(db.SessionStore):
    _content_version: int | None = None
    # The browser named a session that is gone, not merely expired: ended by "Forget
    # everything" (its row deleted at once), since its cookie lapses with its expiry.
    ended = False

    def _get_session_from_db(self):
        from lessons.models import ContentVersion

        connection = connections[router.db_for_read(self.model)]
        with connection.cursor() as cursor:
            # Written out, not built with the ORM: compiling the query cost more than running it.
            cursor.execute(
                _SESSION_WITH_VERSION.format(
                    session=connection.ops.quote_name(self.model._meta.db_table),
                    version=connection.ops.quote_name(ContentVersion._meta.db_table),
                ),
                [connection.ops.adapt_datetimefield_value(timezone.now()), self.session_key],
            )
            row = cursor.fetchone()
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
