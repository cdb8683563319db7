from __future__ import annotations

import io
import os

import psycopg
import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from lessons.models import Lesson

# Left out of `make test` unless asked for: the load smoke (CI asks) and the screenshot
# refresh, which rewrites the tracked pictures in docs/screenshots/ (`make screenshots`).
OPT_IN = {"slow": "LIGHTMYSKY_SLOW_TESTS", "screenshots": "LIGHTMYSKY_SCREENSHOTS"}


def pytest_collection_modifyitems(config, items):
    """PostgreSQL-only tests (concurrency) are skipped when the suite runs on SQLite."""
    from django.db import connection

    left_out = [
        item
        for item in items
        if any(
            marker in item.keywords and not os.environ.get(variable)
            for marker, variable in OPT_IN.items()
        )
    ]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason=POSTGRES_SKIP_REASON)
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def test_database_dropped_at_the_end(django_db_setup, django_db_blocker):
    """On PostgreSQL, the test database can be dropped only when nothing else is connected to
    it: a connection of a thread a test started (the live server's, another tab's) may still
    be closing when a pytest-xdist process ends on a test that does not wait for it. Close them
    first, so that the drop does not fail a run whose tests all passed."""
    yield
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


POSTGRES_RUN = "DATABASE_URL=postgres://postgres@127.0.0.1:5432/lightmysky_ci make test"
POSTGRES_SKIP_REASON = f"needs PostgreSQL: {POSTGRES_RUN}"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say, just above the summary line, that the PostgreSQL-only tests did not run here
    (counted from the skips reported: with pytest-xdist the workers, not this process, collect)."""
    reports = terminalreporter.stats.get("skipped", [])
    if skipped := sum(POSTGRES_SKIP_REASON in str(report.longrepr) for report in reports):
        terminalreporter.write_line(
            f"{skipped} PostgreSQL-only tests (concurrency, locks, connections) were skipped on "
            f"SQLite; CI runs them. To run them here: {POSTGRES_RUN}",
            yellow=True,
        )


SEED_ID = "mt__e-JwIxHek"
SEED_PATH = (
    "/learn/computing/training-across-many-devices-data-model-and-pipeline-parallelism-" + SEED_ID
)


def another_postgres_connection() -> psycopg.Connection:
    """A connection of its own to the test database, as another process would open one."""
    params = connection.get_connection_params()
    database = {
        key: params[key] for key in ("dbname", "user", "password", "host", "port") if key in params
    }
    return psycopg.connect(**database, autocommit=True)


@pytest.fixture(autouse=True)
def fresh_cache():
    """Each test starts with empty caches (rendered pages, lesson data); rate-limit counters
    live in the database, which each test starts afresh anyway."""
    from django.core.cache import caches

    for name in ("default", "pages"):
        caches[name].clear()
    yield
    for name in ("default", "pages"):
        caches[name].clear()


@pytest.fixture(autouse=True)
def quick_password_hashing(settings):
    """Passwords hashed in a blink, as Django's testing docs advise: the real hasher takes most
    of a second a password on purpose, and hundreds of tests make an editor. The servers the
    ops tests start run the production settings, real hasher included."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def window_start():
    """Rate limits count in fixed windows (a minute, ten, an hour) that all turn on the hour:
    a test that counts to a budget starts at a turn, or its counters may reset halfway (as
    they did in one CI run). Ask for it before the fixtures that make rows."""
    with time_machine.travel(timezone.now().replace(minute=0, second=0, microsecond=0)):
        yield


@pytest.fixture
def demo(db) -> Lesson:
    """The demo content, loaded as `make setup` loads it; returns the seed lesson."""
    call_command("load_demo", stdout=io.StringIO())
    return Lesson.objects.get(public_id=SEED_ID)


@pytest.fixture
def assert_max_queries():
    """Like django_assert_max_num_queries, not counting the SAVEPOINT and RELEASE statements
    that only exist because each test runs inside a transaction (in production an atomic block
    is a plain BEGIN and COMMIT)."""
    from contextlib import contextmanager

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    @contextmanager
    def check(limit: int):
        with CaptureQueriesContext(connection) as captured:
            yield captured
        queries = [
            q["sql"]
            for q in captured.captured_queries
            if not q["sql"].upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO"))
        ]
        assert len(queries) <= limit, f"{len(queries)} queries, over {limit}:\n" + "\n".join(
            queries
        )

    return check


@pytest.fixture
def editor(db) -> User:
    """An editor as `create_editor` makes one: staff in the Editors group, not a superuser."""
    call_command("create_editor", "ada", "--password", "a-long-password", stdout=io.StringIO())
    return User.objects.get(username="ada")


@pytest.fixture
def editor_client(editor) -> Client:
    """A browser signed in to the admin as `editor` (pytest-django's admin_client is a
    superuser, who can do more than an editor)."""
    client = Client()
    client.force_login(editor)
    return client


@pytest.fixture
def redis_counters(settings):
    """Rate-limit counters in the Redis of REDIS_URL (skipped when none answers), under a key
    prefix of this test's own, removed afterwards. Yields the Redis client."""
    import uuid

    import redis

    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    server = redis.Redis.from_url(redis_url)
    try:
        server.ping()
    except redis.ConnectionError:
        pytest.skip(f"no Redis at {redis_url}")
    settings.RATE_LIMIT_REDIS_URL = redis_url
    settings.CACHE_KEY_PREFIX = f"test-{uuid.uuid4().hex}"
    try:
        yield server
    finally:
        for key in server.scan_iter(f"{settings.CACHE_KEY_PREFIX}:*"):
            server.delete(key)
        server.close()
