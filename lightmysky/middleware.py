"""Site-wide middleware: the request log, health checks answered before anything else, body
size limits, staff session lifetimes, the Permissions-Policy header, open cross-origin reads of
the API and agent files, and private caching of pages made for a learner."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control

from lightmysky import metrics
from lightmysky.lib.http import SiteRequest

Handler = Callable[[HttpRequest], HttpResponse]
request_logger = logging.getLogger("lightmysky.requests")
# nginx's $request_id is 32 hex digits; a balancer's may be a UUID. Anything else is not logged.
REQUEST_ID = re.compile(r"[A-Za-z0-9-]{8,64}")

# The JSON API: its errors are JSON too, whatever answers them.
API_PREFIX = "/api/"
ADMIN_PREFIX = "/admin/"
# Public, read-only resources that any site may fetch from a browser.
OPEN_READ_PREFIXES = (API_PREFIX, "/openapi.json", "/llms", "/.well-known/", "/index.md")


def request_log_middleware(get_response: Handler) -> Handler:
    """One log line per request: method, path, status, time taken, and the request's id: the
    one nginx passes in X-Request-ID (`proxy_set_header X-Request-ID $request_id;`), or one made
    here. The same id is on the traceback's log line and in the error mail of a failed request."""

    from lightmysky.health import PROBES

    def middleware(request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        passed_in = REQUEST_ID.fullmatch(request.headers.get("X-Request-ID", ""))
        request_id = passed_in[0] if passed_in else uuid.uuid4().hex
        cast(SiteRequest, request).request_id = request_id
        response = get_response(request)
        seconds = time.perf_counter() - started
        # Probes are counted apart: a failing /readyz must not look like a failing page.
        if request.path_info in PROBES:
            metrics.observe_probe(request.path_info, response.status_code)
        else:
            metrics.observe_request(response.status_code, seconds)
        # What the request did, as the views and the rate limits noted it on the request.
        if answers := getattr(request, "answers_recorded", 0):
            metrics.answers_recorded(answers)
        if scope := getattr(request, "rate_limit_refused", None):
            metrics.rate_limit_refused(scope)
        duration_ms = round(seconds * 1000, 1)
        extra = {
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": duration_ms,
            "request_id": request_id,
        }
        request_logger.info(
            "%s %s %s %sms",
            request.method,
            request.path,
            response.status_code,
            duration_ms,
            extra=extra,
        )
        return response

    return middleware


def health_middleware(get_response: Handler) -> Handler:
    """/healthz and /readyz before host validation and the https redirect: a probe by address
    over plain HTTP sees the answer itself, not a 400 or a 301."""
    from lightmysky.health import PROBES

    def middleware(request: HttpRequest) -> HttpResponse:
        if (probe := PROBES.get(request.path_info)) is not None:
            return probe(request)
        return get_response(request)

    return middleware


def request_size_middleware(get_response: Handler) -> Handler:
    """Refuse a body larger than MAX_REQUEST_BYTES before anything reads it: 413, not a 500.
    Staff in the admin, where editors upload lesson videos, have a limit of their own; it runs
    after AuthenticationMiddleware to know them (neither it nor the session reads the body)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        allowed = settings.MAX_REQUEST_BYTES
        if length > allowed and request.path.startswith(ADMIN_PREFIX) and request.user.is_staff:
            allowed = settings.ADMIN_MAX_REQUEST_BYTES
        if length > allowed:
            limit = allowed // (1024 * 1024)
            message = f"The request is too large: at most {limit} MB is accepted."
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": message}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return get_response(request)

    return middleware


# When the session's account signed in, in Unix time; kept in the session itself.
SIGNED_IN_AT = "signed_in_at"


def staff_session_middleware(get_response: Handler) -> Handler:
    """A session signed in to an account ends STAFF_SESSION_IDLE_SECONDS after its last admin
    page, and STAFF_SESSION_MAX_SECONDS after sign-in at the latest: each admin response moves
    its expiry (the database row's and the cookie's) to the nearer of the two. Anonymous
    learners' sessions keep SESSION_COOKIE_AGE. Only /admin/ is looked at, so learners' pages
    never read a session they would not read anyway."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if request.path.startswith(ADMIN_PREFIX) and request.user.is_authenticated:
            now = time.time()
            signed_in_at = request.session.setdefault(SIGNED_IN_AT, int(now))
            ends = min(
                now + settings.STAFF_SESSION_IDLE_SECONDS,
                signed_in_at + settings.STAFF_SESSION_MAX_SECONDS,
            )
            request.session.set_expiry(datetime.fromtimestamp(ends, tz=UTC))
        return response

    return middleware


def permissions_policy_middleware(get_response: Handler) -> Handler:
    """The browser features this site never uses are switched off for it."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        response.setdefault("Permissions-Policy", settings.PERMISSIONS_POLICY)
        return response

    return middleware


def open_reads_middleware(get_response: Handler) -> Handler:
    """Allow cross-origin GET of the API and the agent files; nothing else, and no credentials."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        path = request.path
        if request.method in ("GET", "HEAD") and (
            path.startswith(OPEN_READ_PREFIXES) or path.endswith(".md")
        ):
            response["Access-Control-Allow-Origin"] = "*"
        return response

    return middleware


def private_for_learners_middleware(get_response: Handler) -> Handler:
    """A page made for a browser with a session (a learner's stars, "Continue", their counts) is
    marked private, so no shared cache keeps it for others: `Vary: Cookie` alone is a promise
    that some CDNs and proxy caches ignore. Views that say how they are cached keep their say."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if settings.SESSION_COOKIE_NAME in request.COOKIES and not response.has_header(
            "Cache-Control"
        ):
            patch_cache_control(response, private=True)
        return response

    return middleware
