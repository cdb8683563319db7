"""Per-browser and per-address budgets for writes, and per-account and per-address budgets
for failed admin sign-ins, counted in fixed windows. An address is the client's as
lightmysky.lib.addresses finds it; an IPv6 client is counted by its /64.

The counters live in a table of their own (`RateLimitCounter`), or in Redis when CACHE_URL names
one, never in a cache that evicts entries when it is full: there a flood of new clients would
push out the counts of a client that had reached its limit, and give it a fresh budget.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import secrets
import time
from functools import cache, wraps
from typing import TYPE_CHECKING, NamedTuple, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import connection
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from lightmysky.lib.addresses import IPAddress, client_address
from lightmysky.lib.http import SiteRequest
from lightmysky.models import RateLimitCounter

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)


def address_key(address: IPAddress | None, *, ipv6_prefix: int = 64) -> str:
    """What an address is counted as: an IPv4 address, or the /64 an IPv6 address is in (one
    subscriber is handed a whole /64 and may use any address in it)."""
    if address is None:
        return "unknown"
    if address.version == 6:
        return str(ipaddress.IPv6Network((address, ipv6_prefix), strict=False))
    return str(address)


# Guesses at transfer codes count an IPv6 client by its /48, the block a tunnel broker hands
# anyone for free: counted by its /64, one such block was 65,536 budgets of guesses.
IPV6_PREFIXES = {"adopt": 48}


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


def retry_after(request: HttpRequest, scope: str, *, weight: int = 1) -> int | None:
    """Count this request against its scope's limit, as `weight` requests (a scope may count
    what a request writes rather than the request): None while within it, else the seconds
    until the window turns. Addresses get a larger budget: a school shares one."""
    limit = Limit(*settings.RATE_LIMITS[scope])
    now = time.time()
    window_end = window_end_after(now, limit.seconds)
    address = address_key(client_address(request), ipv6_prefix=IPV6_PREFIXES.get(scope, 64))
    budgets = {f"{scope}:ip:{address}": limit.per_address}
    if limit.per_browser:
        budgets[f"{scope}:browser:{browser_key(request)}"] = limit.per_browser
    counts = counters_increment(keys=list(budgets), window_end=window_end, by=weight)
    if all(counts.get(key, 0) <= allowed for key, allowed in budgets.items()):
        return None
    cast(SiteRequest, request).rate_limit_refused = scope  # the request log counts it
    return max(1, math.ceil(window_end - now))


def window_end_after(now: float, seconds: int) -> int:
    """The end (Unix time) of the fixed window of `seconds` that `now` falls in."""
    return (int(now // seconds) + 1) * seconds


class SignInAttempt(NamedTuple):
    """An admin sign-in, counted before its password is checked."""

    keys: list[str]
    window_end: int
    wait: int | None  # seconds until the window turns, when a budget is spent


def sign_in_attempt_count(request: HttpRequest, *, username: str) -> SignInAttempt:
    """Count an admin sign-in against the failures allowed to the name typed and to the
    address (RATE_LIMITS["admin_login"]), before the password is checked, so that guesses sent
    at once cannot all slip in under the limit. A name is counted whether or not an account has
    it: a locked name looks the same either way.

    A browser that has signed in to this account before (KNOWN_BROWSER_COOKIE, made void by a
    new password) is refused by a budget of its own instead of the name's, so that someone
    failing on purpose cannot lock an editor out of their own browser. Its failures still count
    against the name: a guesser holding such a cookie is locked out of every other browser, as
    the editor would see."""
    per_account, per_address, seconds = settings.RATE_LIMITS["admin_login"]
    now = time.time()
    window_end = window_end_after(now, seconds)
    name_key = f"admin_login:account:{sign_in_name_key(username)}"
    address = f"admin_login:ip:{address_key(client_address(request))}"
    known = known_browser(request, username)
    own_key = f"admin_login:browser:{known}" if known else name_key
    keys = list(dict.fromkeys([name_key, own_key, address]))
    counts = counters_increment(keys=keys, window_end=window_end)
    budgets = {own_key: per_account, address: per_address}
    if all(counts.get(key, 0) <= allowed for key, allowed in budgets.items()):
        return SignInAttempt(keys, window_end, wait=None)
    cast(SiteRequest, request).rate_limit_refused = "admin_login"
    return SignInAttempt(keys, window_end, wait=max(1, math.ceil(window_end - now)))


def sign_in_name_key(username: str) -> str:
    """What a typed name is counted as (not the name itself)."""
    return hashlib.sha256(username.casefold().encode()).hexdigest()[:24]


# A signed cookie left by a successful admin sign-in: for which name and password, and a random
# id of the browser. Only /admin/ sees it.
KNOWN_BROWSER_COOKIE = "admin_known_browser"
KNOWN_BROWSER_SALT = "lightmysky.ratelimit.known_browser"
KNOWN_BROWSER_SECONDS = 400 * 24 * 60 * 60


def _password_key(user) -> str:
    """Changes when the account's password does (Django's session hash of it, hashed again)."""
    return hashlib.sha256(user.get_session_auth_hash().encode()).hexdigest()[:24]


def known_browser(request: HttpRequest, username: str) -> str | None:
    """The id of this browser if it signed in to this account, with its present password, before."""
    value = request.COOKIES.get(KNOWN_BROWSER_COOKIE)
    if not value:
        return None
    try:
        signed = signing.loads(value, salt=KNOWN_BROWSER_SALT, max_age=KNOWN_BROWSER_SECONDS)
    except signing.BadSignature:
        return None
    if not isinstance(signed, dict) or signed.get("name") != sign_in_name_key(username):
        return None
    user_model = get_user_model()
    user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
    if user is None or signed.get("password") != _password_key(user):
        return None
    return str(signed.get("browser"))


def remember_known_browser(response: HttpResponse, user) -> None:
    """After a successful sign-in: this browser may sign in to this account despite a lock."""
    value = signing.dumps(
        {
            "name": sign_in_name_key(user.get_username()),
            "password": _password_key(user),
            "browser": secrets.token_urlsafe(12),
        },
        salt=KNOWN_BROWSER_SALT,
    )
    response.set_cookie(
        KNOWN_BROWSER_COOKIE,
        value,
        max_age=KNOWN_BROWSER_SECONDS,
        path=reverse("admin:index"),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def sign_in_attempt_take_back(attempt: SignInAttempt) -> None:
    """The sign-in succeeded: it is no failure, and leaves the counts as they were."""
    counters_decrement(keys=attempt.keys, window_end=attempt.window_end)


def counters_increment(*, keys: list[str], window_end: int, by: int = 1) -> dict[str, int]:
    """Add `by` to each key's counter for the window ending at `window_end` (Unix time), at
    once for all concurrent requests; return the new counts by key. With the Redis of
    CACHE_URL down, count nothing and let the request through (/readyz reports the outage):
    a missing limit for a while is better than refusing every answer."""
    if settings.RATE_LIMIT_REDIS_URL:
        import redis  # the `redis` extra: only a site with CACHE_URL=redis:// needs it

        try:
            return _increment_in_redis(keys, window_end, by)
        except redis.RedisError as error:
            cache_failed(error, consequence="rate limits not counted")
            return {}
    return _increment_in_database(keys, window_end, by)


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


def counters_decrement(*, keys: list[str], window_end: int) -> None:
    """Take one off each key's counter for the window ending at `window_end` (a counted request
    turned out not to count); with the Redis of CACHE_URL down, do nothing."""
    if settings.RATE_LIMIT_REDIS_URL:
        import redis

        try:
            _decrement_in_redis(keys, window_end)
        except redis.RedisError as error:
            cache_failed(error, consequence="a rate-limit count was not taken back")
        return
    RateLimitCounter.objects.filter(key__in=keys, window_end=window_end).update(
        count=F("count") - 1
    )


def _increment_in_database(keys: list[str], window_end: int, by: int) -> dict[str, int]:
    # One upsert, so concurrent requests queue on the row instead of all reading the same
    # count. SQLite (3.35 or newer) and PostgreSQL both speak it; the ORM cannot return the count.
    table = connection.ops.quote_name(RateLimitCounter._meta.db_table)
    rows = ", ".join(["(%s, %s, %s)"] * len(keys))
    sql = (
        f'INSERT INTO {table} ("key", "window_end", "count") VALUES {rows} '
        f'ON CONFLICT ("key", "window_end") DO UPDATE SET "count" = {table}."count" + %s '
        'RETURNING "key", "count"'
    )
    params = [value for key in keys for value in (key, window_end, by)] + [by]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return dict(cursor.fetchall())


@cache
def redis_client(url: str) -> redis.Redis:
    """One client per process; a Redis that does not answer fails a request in a second."""
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)


def _increment_in_redis(keys: list[str], window_end: int, by: int) -> dict[str, int]:
    pipeline = redis_client(settings.RATE_LIMIT_REDIS_URL).pipeline()  # MULTI…EXEC: atomic
    for key in keys:
        name = f"{settings.CACHE_KEY_PREFIX}:ratelimit:{key}:{window_end}"
        pipeline.incrby(name, by)
        pipeline.expireat(name, window_end + 1)
    replies = pipeline.execute()
    return dict(zip(keys, replies[::2], strict=True))


def _decrement_in_redis(keys: list[str], window_end: int) -> None:
    pipeline = redis_client(settings.RATE_LIMIT_REDIS_URL).pipeline()
    for key in keys:
        name = f"{settings.CACHE_KEY_PREFIX}:ratelimit:{key}:{window_end}"
        pipeline.decr(name)
        # Again: a window that ended meanwhile lost its key, which DECR has just made anew.
        pipeline.expireat(name, window_end + 1)
    pipeline.execute()


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
