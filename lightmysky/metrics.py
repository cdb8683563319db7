"""Prometheus metrics at /metrics, for the addresses in METRICS_ALLOWED_CIDRS only.

Requests (by status class) and their latency, health probes and scrapes apart (by probe and
status class, so that a failing /readyz is not a failing page), answers recorded, rate-limit
refusals (by scope), requests that failed on a database error and calls to the shared cache that
failed, in Prometheus's text format. Counts are of the
whole gunicorn server, all its workers together (lightmysky.lib.metricfiles), from its start: a
reload keeps them, a restart starts them again at 0, which Prometheus reads as a counter reset.
"""

from __future__ import annotations

import hashlib
import sys
from functools import cache

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.views.decorators.cache import never_cache

from lightmysky.lib.addresses import client_address, forwarded_by_an_untrusted_peer
from lightmysky.lib.metricfiles import Counters

STATUS_CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")
# Seconds; a page answers in tens of milliseconds, an export or import may take seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = "lightmysky_http_requests_total"
LATENCY = "lightmysky_http_request_duration_seconds"
ANSWERS = "lightmysky_answers_recorded_total"
REFUSALS = "lightmysky_rate_limit_refusals_total"
DATABASE_ERRORS = "lightmysky_database_errors_total"
PROBE_REQUESTS = "lightmysky_probe_requests_total"
CACHE_ERRORS = "lightmysky_cache_errors_total"
HELP = {
    REQUESTS: ("counter", "Requests answered, by status class (probes and scrapes not counted)."),
    LATENCY: ("histogram", "Seconds from a request's arrival to its response."),
    ANSWERS: ("counter", "Answers recorded (new reviews; a resent answer is not counted again)."),
    REFUSALS: ("counter", "Requests refused by a rate limit (429), by scope."),
    DATABASE_ERRORS: ("counter", "Requests that failed on a database error."),
    PROBE_REQUESTS: (
        "counter",
        "Health probes and metrics scrapes answered, by path and status class.",
    ),
    CACHE_ERRORS: (
        "counter",
        "Calls to the shared cache (CACHE_URL) that failed; the request went on without it.",
    ),
}


@cache
def series() -> tuple[tuple[str, str], ...]:
    """(name, labels) of every number kept: the layout of each process's table."""
    found = [(REQUESTS, f'status="{status}"') for status in STATUS_CLASSES]
    found += [(f"{LATENCY}_bucket", f'le="{le}"') for le in LATENCY_BUCKETS]
    found += [(f"{LATENCY}_bucket", 'le="+Inf"'), (f"{LATENCY}_sum", ""), (f"{LATENCY}_count", "")]
    found += [(ANSWERS, "")]
    found += [(REFUSALS, f'scope="{scope}"') for scope in sorted(settings.RATE_LIMITS)]
    found += [(DATABASE_ERRORS, "")]
    from lightmysky.health import PROBES as PROBE_VIEWS

    found += [
        (PROBE_REQUESTS, f'path="{path}",status="{status}"')
        for path in PROBE_VIEWS
        for status in STATUS_CLASSES
    ]
    found += [(CACHE_ERRORS, "")]
    return tuple(found)


@cache
def _slots() -> dict[tuple[str, str], int]:
    return {key: slot for slot, key in enumerate(series())}


_counters: dict[str, Counters] = {}


def counters() -> Counters:
    folder = settings.METRICS_DIR
    if folder not in _counters:
        layout = hashlib.sha256(repr(series()).encode()).hexdigest()[:12]
        _counters[folder] = Counters(folder, layout, len(series()))
    return _counters[folder]


def _add(name: str, labels: str = "", amount: float = 1.0) -> None:
    counters().add(_slots()[name, labels], amount)


def _status_class(status: int) -> str:
    return STATUS_CLASSES[min(max(status // 100, 1), 5) - 1]


def observe_request(status: int, seconds: float) -> None:
    _add(REQUESTS, f'status="{_status_class(status)}"')
    # Buckets are kept apart and added up when read: one write per request, not one per bucket.
    le = next((str(b) for b in LATENCY_BUCKETS if seconds <= b), "+Inf")
    _add(f"{LATENCY}_bucket", f'le="{le}"')
    _add(f"{LATENCY}_sum", amount=seconds)
    _add(f"{LATENCY}_count")


def observe_probe(path: str, status: int) -> None:
    _add(PROBE_REQUESTS, f'path="{path}",status="{_status_class(status)}"')


def cache_error() -> None:
    _add(CACHE_ERRORS)


def answers_recorded(count: int) -> None:
    _add(ANSWERS, amount=count)


def rate_limit_refused(scope: str) -> None:
    _add(REFUSALS, f'scope="{scope}"')


def count_database_error(sender, request=None, **kwargs) -> None:
    """A `got_request_exception` receiver: count the request if a database error failed it."""
    if isinstance(sys.exc_info()[1], DatabaseError):
        _add(DATABASE_ERRORS)


def exposition() -> str:
    """Every series in Prometheus's text format (version 0.0.4)."""
    totals = dict(zip(series(), counters().totals(), strict=True))
    lines = []
    for name, (kind, text) in HELP.items():
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
        if kind == "histogram":
            cumulative = 0.0
            for le in [*map(str, LATENCY_BUCKETS), "+Inf"]:
                cumulative += totals[f"{name}_bucket", f'le="{le}"']
                lines.append(f'{name}_bucket{{le="{le}"}} {_number(cumulative)}')
            lines.append(f"{name}_sum {totals[f'{name}_sum', '']!r}")
            lines.append(f"{name}_count {_number(totals[f'{name}_count', ''])}")
            continue
        for (series_name, labels), value in totals.items():
            if series_name == name:
                lines.append(
                    f"{name}{{{labels}}} {_number(value)}" if labels else f"{name} {_number(value)}"
                )
    return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def allowed(request: HttpRequest) -> bool:
    """Only from the operator's networks, judged by the client's address as the rate limits see
    it. A request forwarded by a peer outside TRUSTED_PROXIES is refused: if that peer is a
    proxy left out of the setting, every visitor behind it would look like the proxy."""
    address = client_address(request)
    if address is None or forwarded_by_an_untrusted_peer(request):
        return False
    return any(address in network for network in settings.METRICS_ALLOWED_NETWORKS)


@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return HttpResponseNotFound("Not found.", content_type="text/plain; charset=utf-8")
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    return HttpResponse(exposition(), content_type="text/plain; version=0.0.4; charset=utf-8")
