"""Per-browser and per-address budgets for writes, counted in Django's cache (fixed windows)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def client_address(request: HttpRequest) -> str:
    """The client's address; behind a trusted proxy, the one it reports (X-Forwarded-For)."""
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[-1].strip()
    return request.META.get("REMOTE_ADDR", "unknown")


def browser_key(request: HttpRequest) -> str:
    """Who the browser is without an account: its CSRF cookie (there from the first form it
    was shown, so it does not change when the first answer starts a session), else its session."""
    raw = request.COOKIES.get(settings.CSRF_COOKIE_NAME) or request.session.session_key or "none"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Limit:
    """At most `per_browser` and `per_address` requests in each window of `seconds`."""

    per_browser: int
    per_address: int
    seconds: int


def retry_after(request: HttpRequest, scope: str) -> int | None:
    """Count this request against its scope's limit: None while within it, else the seconds
    until the window turns. Addresses get a larger budget: a school shares one."""
    limit: Limit = settings.RATE_LIMITS[scope]
    now = time.time()
    slot = int(now // limit.seconds)
    over = False
    budgets = ((f"ip:{client_address(request)}", limit.per_address),)
    if limit.per_browser:
        budgets += ((f"browser:{browser_key(request)}", limit.per_browser),)
    for who, allowed in budgets:
        key = f"ratelimit:{scope}:{who}:{slot}"
        cache.add(key, 0, timeout=limit.seconds + 1)
        try:
            count = cache.incr(key)
        except ValueError:  # evicted between add and incr
            cache.set(key, 1, timeout=limit.seconds + 1)
            count = 1
        over = over or count > allowed
    return max(1, int(limit.seconds - now % limit.seconds)) if over else None


def too_many_requests(request: HttpRequest, wait: int) -> HttpResponse:
    response = render(request, "429.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


def limit_posts(scope: str):
    """Rate-limit a view's POSTs per browser and address: a flood gets 429 with Retry-After."""

    def decorator(view):
        @wraps(view)
        def limited(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST" and (wait := retry_after(request, scope)):
                return too_many_requests(request, wait)
            return view(request, *args, **kwargs)

        return limited

    return decorator
