"""Per-browser and per-address budgets for writes, counted in Django's cache (fixed windows)."""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's address; behind a trusted proxy, the one it reports (X-Forwarded-For)."""
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[-1].strip()
    return request.META.get("REMOTE_ADDR", "unknown")


def browser_key(request: HttpRequest) -> str:
    """Who the browser is without an account: its session, else its CSRF cookie."""
    raw = request.session.session_key or request.COOKIES.get(settings.CSRF_COOKIE_NAME, "none")
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def retry_after(request: HttpRequest, scope: str, limit: int, window: int) -> int | None:
    """Count this request; None while within `limit` per `window` seconds for both the browser
    and the address, else how many seconds to wait."""
    now = time.time()
    slot = int(now // window)
    over = False
    for who in (f"ip:{client_address(request)}", f"browser:{browser_key(request)}"):
        key = f"ratelimit:{scope}:{who}:{slot}"
        cache.add(key, 0, timeout=window + 1)
        try:
            count = cache.incr(key)
        except ValueError:  # evicted between add and incr
            cache.set(key, 1, timeout=window + 1)
            count = 1
        over = over or count > limit
    return max(1, int(window - now % window)) if over else None
