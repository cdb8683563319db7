"""Per-browser and per-address budgets for writes, counted in fixed windows.

The counters live in a table of their own (`RateLimitCounter`), or in Redis when CACHE_URL names
one, never in a cache that evicts entries when it is full: there a flood of new clients would
push out the counts of a client that had reached its limit, and give it a fresh budget.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from functools import cache, wraps
from typing import TYPE_CHECKING, NamedTuple, cast

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from lightmysky.lib.http import SiteRequest
from lightmysky.models import RateLimitCounter

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)


# X-Forwarded-For can carry anything; a longer "address" is cut to fit the counter's key.
ADDRESS_MAX_LENGTH = 100


def client_address(request: HttpRequest) -> str:
    """The client's address; behind trusted proxies, the one the outermost of them reports.

    Each proxy appends the address it received the request from to X-Forwarded-For, so with
    TRUSTED_PROXY_HOPS proxies (a load balancer and nginx: 2) the client is that many entries
    from the end; anything further left was written by the client and proves nothing."""
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if forwarded != [""]:
            return forwarded[-min(settings.TRUSTED_PROXY_HOPS, len(forwarded))]
    return request.META.get("REMOTE_ADDR", "unknown")


def browser_key(request: HttpRequest) -> str:
    """Who the browser is without an account: its CSRF cookie (there from the first form it
    was shown, so it does not change when the first answer starts a session), else its session."""
    raw = request.COOKIES.get(settings.CSRF_COOKIE_NAME) or request.session.session_key or "none"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class Limit(NamedTuple):
    """At most `per_browser` and `per_address` requests in each window of `seconds`."""

    per_browser: int
    per_address: int
    seconds: int


def retry_after(request: HttpRequest, scope: str) -> int | None:
    """Count this request against its scope's limit: None while within it, else the seconds
    until the window turns. Addresses get a larger budget: a school shares one."""
    limit = Limit(*settings.RATE_LIMITS[scope])
    now = time.time()
    window_end = (int(now // limit.seconds) + 1) * limit.seconds
    budgets = {f"{scope}:ip:{client_address(request)[:ADDRESS_MAX_LENGTH]}": limit.per_address}
    if limit.per_browser:
        budgets[f"{scope}:browser:{browser_key(request)}"] = limit.per_browser
    counts = counters_increment(keys=list(budgets), window_end=window_end)
    if all(counts.get(key, 0) <= allowed for key, allowed in budgets.items()):
        return None
    cast(SiteRequest, request).rate_limit_refused = scope  # the request log counts it
    return max(1, math.ceil(window_end - now))


def counters_increment(*, keys: list[str], window_end: int) -> dict[str, int]:
    """Add one to each key's counter for the window ending at `window_end` (Unix time), at
    once for all concurrent requests; return the new counts by key. With the Redis of
    CACHE_URL down, count nothing and let the request through (/readyz reports the outage):
    a missing limit for a while is better than refusing every answer."""
    if settings.RATE_LIMIT_REDIS_URL:
        import redis  # the `redis` extra: only a site with CACHE_URL=redis:// needs it

        try:
            return _increment_in_redis(keys, window_end)
        except redis.RedisError as error:
            cache_failed(error, consequence="rate limits not counted")
            return {}
    return _increment_in_database(keys, window_end)


# Failures of the shared cache: each one counted (/metrics), one warning a minute in the log.
CACHE_WARNING_INTERVAL = 60.0
_cache_failures_since_warning = 0
_cache_warned_at = -CACHE_WARNING_INTERVAL


def cache_failed(error: Exception, *, consequence: str) -> None:
    """Count a failed call to the Redis of CACHE_URL, and warn at most once a minute (in each
    process): an outage under load would otherwise write a line for every request."""
    global _cache_failures_since_warning, _cache_warned_at
    from lightmysky import metrics

    metrics.cache_error()
    _cache_failures_since_warning += 1
    now = time.monotonic()
    if now - _cache_warned_at < CACHE_WARNING_INTERVAL:
        return
    logger.warning(
        "the cache is unreachable (%r): %s; %d failure(s) in this process since the last "
        "warning, the next warning in a minute at the earliest",
        error,
        consequence,
        _cache_failures_since_warning,
    )
    _cache_failures_since_warning = 0
    _cache_warned_at = now


def _increment_in_database(keys: list[str], window_end: int) -> dict[str, int]:
    # One upsert, so concurrent requests queue on the row instead of all reading the same
    # count. SQLite (3.35 or newer) and PostgreSQL both speak it; the ORM cannot return the count.
    table = connection.ops.quote_name(RateLimitCounter._meta.db_table)
    rows = ", ".join(["(%s, %s, 1)"] * len(keys))
    sql = (
        f'INSERT INTO {table} ("key", "window_end", "count") VALUES {rows} '
        f'ON CONFLICT ("key", "window_end") DO UPDATE SET "count" = {table}."count" + 1 '
        'RETURNING "key", "count"'
    )
    params = [value for key in keys for value in (key, window_end)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return dict(cursor.fetchall())


@cache
def redis_client(url: str) -> redis.Redis:
    """One client per process; a Redis that does not answer fails a request in a second."""
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)


def _increment_in_redis(keys: list[str], window_end: int) -> dict[str, int]:
    pipeline = redis_client(settings.RATE_LIMIT_REDIS_URL).pipeline()  # MULTI…EXEC: atomic
    for key in keys:
        name = f"{settings.CACHE_KEY_PREFIX}:ratelimit:{key}:{window_end}"
        pipeline.incr(name)
        pipeline.expireat(name, window_end + 1)
    replies = pipeline.execute()
    return dict(zip(keys, replies[::2], strict=True))


def counters_prune(*, now: float) -> int:
    """Delete the database's counters of windows that have ended; return how many."""
    deleted, _ = RateLimitCounter.objects.filter(window_end__lte=now).delete()
    return deleted


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
