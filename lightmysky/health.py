"""Liveness and readiness, answered before host validation and the https redirect.

A load balancer, or `curl http://127.0.0.1:8000/readyz` on the server, probes gunicorn by address
over plain HTTP: it must see the 503 itself, not a 400 for an unknown Host or a redirect.
Readiness judges the code this process runs: the migrations on disk when it started (a
`git pull` that lands a new one does not drain a server still running the old code).
"""

from __future__ import annotations

import logging
import pkgutil
from functools import cache
from importlib import import_module

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lightmysky.ratelimit import redis_client
from lightmysky.release import release

logger = logging.getLogger(__name__)


@cache
def loaded_migrations() -> frozenset[tuple[str, str]]:
    """(app label, migration name) of every migration file this process found at start."""
    found = set()
    for app_config in apps.get_app_configs():
        module_name, _ = MigrationLoader.migrations_module(app_config.label)
        if module_name is None:
            continue
        try:
            module = import_module(module_name)
        except ModuleNotFoundError:
            continue
        for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not info.ispkg and not info.name.startswith(("_", "~")):
                found.add((app_config.label, info.name))
    return frozenset(found)


def _replaced_and_applied(key: tuple[str, str], applied: set[tuple[str, str]]) -> bool:
    """A squashed migration counts as applied when every migration it replaces is."""
    module_name, _ = MigrationLoader.migrations_module(key[0])
    replaces = getattr(import_module(f"{module_name}.{key[1]}").Migration, "replaces", [])
    return bool(replaces) and all(tuple(r) in applied for r in replaces)


def unapplied_migrations() -> list[tuple[str, str]]:
    recorder = MigrationRecorder(connection)
    applied = set(recorder.applied_migrations()) if recorder.has_table() else set()
    return sorted(
        key for key in loaded_migrations() - applied if not _replaced_and_applied(key, applied)
    )


def cache_problem() -> str | None:
    """The Redis that CACHE_URL names, if any, must answer: the rate limits count in it."""
    if not settings.RATE_LIMIT_REDIS_URL:
        return None
    import redis  # the `redis` extra, installed where CACHE_URL=redis:// (see the settings)

    try:
        redis_client(settings.RATE_LIMIT_REDIS_URL).ping()
    except redis.RedisError as error:
        return f"cache unreachable: {error.__class__.__name__}"
    return None


@require_safe
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers. It touches nothing else."""
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8")


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers, the migrations of the running code are applied and the
    cache (when there is a shared one) answers; 503 with the problems otherwise. The body names
    the release this process runs, so an upgrade can see each server take it up."""
    problems = []
    try:
        if pending := unapplied_migrations():
            problems.append(f"{len(pending)} migration(s) not applied")
    except DatabaseError as error:
        problems.append(f"database unreachable: {error.__class__.__name__}")
    if problem := cache_problem():
        problems.append(problem)
    if problems:
        logger.warning("not ready: %s", "; ".join(problems))
    status = 503 if problems else 200
    body = {"ready": not problems, "problems": problems, "release": release()}
    return JsonResponse(body, status=status)


def _metrics(request: HttpRequest) -> HttpResponse:
    from lightmysky.metrics import metrics

    return metrics(request)


# Answered before host validation and the https redirect: probes and scrapes come by address.
PROBES = {"/healthz": healthz, "/readyz": readyz, "/metrics": _metrics}
