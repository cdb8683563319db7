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

import logging

from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.db import models
from django.utils import timezone


class SessionStore(db.SessionStore):
    _content_version: int | None = None

    def _get_session_from_db(self):
        from lessons.models import ContentVersion

        version = ContentVersion.objects.filter(pk=1).values("number")[:1]
        try:
            found = self.model.objects.annotate(content_version=models.Subquery(version)).get(
                session_key=self.session_key, expire_date__gt=timezone.now()
            )
        except (self.model.DoesNotExist, SuspiciousOperation) as error:  # as Django's own
            if isinstance(error, SuspiciousOperation):
                logger = logging.getLogger(f"django.security.{error.__class__.__name__}")
                logger.warning(str(error))
            self._session_key = None
            return None
        self._content_version = found.content_version or 0
        return found

    def content_version(self) -> int | None:
        """The content version read with this session (loading it if the browser named one), or
        None when no session row was read: a new browser, or an ended session."""
        if self.session_key is not None:
            self.keys()  # loads the session, and the version with it, once
        return self._content_version
