"""Liveness and readiness, answered before host validation and the https redirect.

A load balancer, or `curl http://127.0.0.1:8000/readyz` on the server, probes gunicorn by address
over plain HTTP: it must see the 503 itself, not a 400 for an unknown Host or a redirect.
Readiness judges the code this process runs: the migrations on disk when it started (a
`git pull` that lands a new one does not drain a server still running the old code). It also
fails for the mistakes of configuration that make every page fail while the process runs: a
SITE_URL whose host ALLOWED_HOSTS refuses (every page 400), static files never collected (every
page 500) and a media folder the site cannot write (every upload fails).
"""

from __future__ import annotations

import logging
import pkgutil
import re
import tempfile
from datetime import UTC, datetime
from functools import cache
from importlib import import_module
from pathlib import Path
from urllib.parse import urlsplit

from django.apps import apps
from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin, staticfiles_storage
from django.core.files.storage import FileSystemStorage, default_storage
from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import split_domain_port, validate_host
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lightmysky.lib.sqlitefile import database_file_problem
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


# What a database error says, in words an operator acts on. Only these phrases are shown: the
# driver's whole message may name more than a probe should tell.
DATABASE_REASONS = [
    (re.compile(r'(\w+ authentication failed for user "[^"]*")'), "database: {0}"),
    (re.compile(r"(no password supplied)"), "database: authentication failed: {0}"),
    (re.compile(r'(role "[^"]*" does not exist)'), "database: {0}"),
    (re.compile(r'(database "[^"]*" does not exist)'), "database: {0}"),
    (re.compile(r"(Connection refused)"), "database unreachable: connection refused"),
    (re.compile(r"(unable to open database file)"), "database: {0}"),
]


def database_problem(error: DatabaseError) -> str:
    """Why the database failed a probe: the cause when it is one of the known ones."""
    text = str(error)
    for pattern, reason in DATABASE_REASONS:
        if match := pattern.search(text):
            return reason.format(match[1])
    return f"database unreachable: {error.__class__.__name__}"


def site_host_problem() -> str | None:
    """SITE_URL is where learners come: a host that ALLOWED_HOSTS refuses makes every page 400."""
    host, _ = split_domain_port(urlsplit(settings.SITE_URL).netloc)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:  # what Django itself allows then
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    if validate_host(host, allowed):
        return None
    return f"SITE_URL's host {host!r} is not in ALLOWED_HOSTS: every page would answer 400"


def static_files_problem() -> str | None:
    """With hashed static files, a page links them through the manifest `collectstatic` writes;
    without it every page is a 500. The manifest is read when the process starts."""
    if not isinstance(staticfiles_storage, ManifestFilesMixin):
        return None
    if staticfiles_storage.hashed_files:
        return None
    manifest = Path(settings.STATIC_ROOT) / staticfiles_storage.manifest_name
    if manifest.exists():
        return f"static files: {manifest} was written after this process started: reload it"
    return f"static files: no {manifest}: run collectstatic, then reload"


def media_problem() -> str | None:
    """Uploads go to MEDIA_ROOT (unless in object storage): the site must be able to write there.
    A folder not made yet is fine if the site can make it."""
    if not isinstance(default_storage, FileSystemStorage):
        return None
    folder = Path(settings.MEDIA_ROOT)
    existing = next(p for p in [folder, *folder.parents] if p.exists())
    if not existing.is_dir():
        return f"media folder: {existing} is not a folder"
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        return f"media folder: cannot write in {existing}: {error.strerror or error}"
    return None


@require_safe
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers. It touches nothing else."""
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8")


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers, the migrations of the running code are applied, the
    cache (when there is a shared one) answers, and nothing in the configuration keeps every
    page from being served; 503 with the problems otherwise. The body names the release this
    process runs and when it loaded it (STARTED_AT), so an upgrade or a reload can see each
    server take it up."""
    problems = []
    if problem := database_file_problem():
        problems.append(problem)  # and no query, which would make an empty file at the path
    else:
        try:
            if pending := unapplied_migrations():
                problems.append(f"{len(pending)} migration(s) not applied")
        except DatabaseError as error:
            problems.append(database_problem(error))
    for check in (cache_problem, site_host_problem, static_files_problem, media_problem):
        if problem := check():
            problems.append(problem)
    if problems:
        logger.warning("not ready: %s", "; ".join(problems))
    status = 503 if problems else 200
    body = {
        "ready": not problems,
        "problems": problems,
        "release": release(),
        "started_at": STARTED_AT.isoformat().replace("+00:00", "Z"),
    }
    return JsonResponse(body, status=status)


def _metrics(request: HttpRequest) -> HttpResponse:
    from lightmysky.metrics import metrics

    return metrics(request)


# When this process loaded the site. gunicorn's master loads it once (preload_app) and its
# workers share the moment, so after `systemctl reload` /readyz shows whether a new master took
# over: a reload that failed leaves the old moment, and the release alone cannot tell (a reload
# for a changed setting keeps the release).
STARTED_AT = datetime.now(UTC).replace(microsecond=0)


# Answered before host validation and the https redirect: probes and scrapes come by address.
PROBES = {"/healthz": healthz, "/readyz": readyz, "/metrics": _metrics}
