"""Whole pages shared by every visitor without a session, until the content changes.

Most lesson-page traffic is readers, agents and crawlers with no progress: they all get the
same bytes. The cache key holds the content version, so an editor's change shows on the very
next request on every app server; a warm hit costs the one query that reads the version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from lightmysky.lib.negotiation import wants_markdown
from lightmysky.lib.versioned import LIFETIME


def _key(request: HttpRequest, version: int, daily: bool) -> str:
    variant = "|".join(
        [
            request.get_full_path(),
            "md" if wants_markdown(request) else "html",
            timezone.now().date().isoformat() if daily else "",
        ]
    )
    return f"v{version}:page:" + hashlib.sha256(variant.encode()).hexdigest()


type View = Callable[..., HttpResponse]


def cache_for_visitors_by(
    version: Callable[[HttpRequest], int], *, daily: bool = False
) -> Callable[[View], View]:
    """A decorator that caches a view's page for visitors under `version(request)`, and under
    the day's date too if it is `daily` (a page that shows dates counted from today)."""

    def decorator(view: View) -> View:
        @wraps(view)
        def cached_view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            # Only plain addresses (and ?mode=agent), as written: any other query string, even
            # one that reads the same (?mode=agent&, ?%6Dode=agent), would let anyone fill the
            # cache with copies of one page.
            plain = request.META.get("QUERY_STRING", "") in ("", "mode=agent")
            if settings.SESSION_COOKIE_NAME in request.COOKIES or not plain:
                return view(request, *args, **kwargs)
            key = _key(request, version(request), daily)
            response = caches["pages"].get(key)
            if response is None:
                response = view(request, *args, **kwargs)
                cacheable = not response.cookies and not response.streaming
                if response.status_code == 200 and cacheable:
                    caches["pages"].set(key, response, LIFETIME)
            return response

        return cached_view

    return decorator
