"""/healthz and /readyz answer over plain HTTP in production, so a probe can see them fail."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings

from lightmysky import ratelimit
from lightmysky.health import STARTED_AT
from lightmysky.release import release
from practice.models import Review
from tests.ops.servers import ROOT, production_env
from tests.practice.helpers import answer

STARTED = STARTED_AT.isoformat().replace("+00:00", "Z")  # when this process loaded the site

# What docs/deploy.md's `curl -fsS http://127.0.0.1:8000/readyz` does: plain HTTP, no proxy header.
PLAIN_HTTP_READYZ = (
    "from django.test import Client; r = Client().get('/readyz'); "
    "print('RESULT', r.status_code, r.content.decode())"
)


@override_settings(SECURE_SSL_REDIRECT=True)
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_checks_answer_over_plain_http_in_production(client, db, path):
    response = client.get(path)
    assert response.status_code == 200


@override_settings(SECURE_SSL_REDIRECT=True)
@pytest.mark.parametrize("path", ["/", "/healthz/", "/readyzz", "/progress", "/api/v1/lessons"])
def test_every_other_address_still_redirects_to_https(client, db, path):
    response = client.get(path)
    assert response.status_code == 301
    assert response["Location"] == f"https://testserver{path}"


@override_settings(SECURE_SSL_REDIRECT=True)
def test_readyz_is_503_over_plain_http_with_a_migration_unapplied(client, db):
    MigrationRecorder.Migration.objects.filter(app="lessons").order_by("-applied").first().delete()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "ready": False,
        "problems": ["1 migration(s) not applied"],
        "release": release(),
        "started_at": STARTED,
    }


def readyz_over_plain_http(env: dict[str, str]) -> subprocess.CompletedProcess:
    """/readyz asked in a process of its own, under `env` (the settings are read at start)."""
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", PLAIN_HTTP_READYZ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_readyz_is_503_over_plain_http_when_the_database_is_unreachable():
    # The documented production environment, whose SSL redirect is on by default.
    env = production_env("postgres://nobody@127.0.0.1:1/nothing", SITE_URL="https://127.0.0.1")
    del env["SECURE_SSL_REDIRECT"]
    result = readyz_over_plain_http(env)
    assert "RESULT 503 " in result.stdout, result.stdout + result.stderr
    assert "database unreachable" in result.stdout


@override_settings(
    SECURE_SSL_REDIRECT=True,
    ALLOWED_HOSTS=["lightmysky.example.org"],
    SITE_URL="https://lightmysky.example.org",
)
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_checks_answer_a_probe_by_address_whatever_its_host(client, db, path):
    # A load balancer probes gunicorn by address: the Host is 10.0.0.5:8000, not the site's.
    response = client.get(path, headers={"host": "10.0.0.5:8000"})
    assert response.status_code == 200


@override_settings(ALLOWED_HOSTS=["lightmysky.example.org"])
def test_a_refused_host_logs_one_line_without_a_traceback(client, db, caplog):
    response = client.get("/", headers={"host": "10.0.0.5:8000"})
    assert response.status_code == 400
    records = [r for r in caplog.records if r.name == "django.security.DisallowedHost"]
    assert len(records) == 1 and records[0].exc_info is None


DEAD_REDIS = "redis://127.0.0.1:1/0"


@override_settings(RATE_LIMIT_REDIS_URL=DEAD_REDIS)
def test_readyz_is_503_when_the_cache_is_down(client, db):
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "ready": False,
        "problems": ["cache unreachable: ConnectionError"],
        "release": release(),
        "started_at": STARTED,
    }


def test_answers_go_through_uncounted_when_the_cache_is_down_with_one_warning_a_minute(
    client, demo, caplog, settings, tmp_path, monkeypatch
):
    settings.RATE_LIMIT_REDIS_URL = DEAD_REDIS
    settings.METRICS_DIR = str(tmp_path)
    monkeypatch.setattr(ratelimit, "_cache_warned_at", -ratelimit.CACHE_WARNING_INTERVAL)
    statuses = []
    for _ in range(3):
        response = answer(client, demo, right=True)
        statuses.append(response.status_code)
    assert statuses == [302, 302, 302]
    assert Review.objects.count() == 3
    warnings = [r.getMessage() for r in caplog.records if "cache is unreachable" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "rate limits not counted" in warnings[0]
    scraped = client.get("/metrics").content.decode()
    assert "\nlightmysky_cache_errors_total 3\n" in scraped


# Configuration mistakes that make every page fail while the process runs: /readyz says so.


def test_readyz_is_503_when_site_urls_host_is_not_allowed(client, db, settings):
    settings.SITE_URL = "https://lightmysky.example.org"
    settings.ALLOWED_HOSTS = ["www.lightmysky.example.org"]
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["problems"] == [
        "SITE_URL's host 'lightmysky.example.org' is not in ALLOWED_HOSTS: "
        "every page would answer 400"
    ]
    settings.ALLOWED_HOSTS = [".lightmysky.example.org"]
    assert client.get("/readyz").status_code == 200


MANIFEST_STORAGE = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}


def test_readyz_is_503_without_the_static_files_manifest(client, db, settings, tmp_path):
    settings.STORAGES = MANIFEST_STORAGE
    settings.STATIC_ROOT = tmp_path / "static"
    response = client.get("/readyz")
    assert response.status_code == 503
    manifest = tmp_path / "static" / "staticfiles.json"
    assert response.json()["problems"] == [
        f"static files: no {manifest}: run collectstatic, then reload"
    ]


def test_readyz_says_reload_when_collectstatic_ran_after_the_start(client, db, settings, tmp_path):
    settings.STORAGES = MANIFEST_STORAGE
    settings.STATIC_ROOT = tmp_path / "static"
    assert client.get("/readyz").status_code == 503  # this process read no manifest
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "staticfiles.json").write_text(
        '{"paths": {"site.css": "site.0123456789ab.css"}, "version": "1.1", "hash": "x"}'
    )
    response = client.get("/readyz")
    assert response.status_code == 503
    assert "was written after this process started: reload it" in response.json()["problems"][0]


def test_readyz_is_200_with_the_manifest_read_at_start(client, db, settings, tmp_path):
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "staticfiles.json").write_text(
        '{"paths": {"site.css": "site.0123456789ab.css"}, "version": "1.1", "hash": "x"}'
    )
    settings.STORAGES = MANIFEST_STORAGE
    settings.STATIC_ROOT = tmp_path / "static"
    assert client.get("/readyz").status_code == 200


def test_readyz_is_200_with_a_media_folder_not_made_yet(client, db, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media" / "not-yet"
    assert client.get("/readyz").status_code == 200


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_readyz_is_503_when_the_media_folder_is_read_only(client, db, settings, tmp_path):
    (tmp_path / "media").mkdir(mode=0o555)
    settings.MEDIA_ROOT = tmp_path / "media"
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["problems"] == [
        f"media folder: cannot write in {tmp_path / 'media'}: Permission denied"
    ]


def test_readyz_is_503_when_the_media_folder_cannot_be_written_even_by_root(client, db, settings):
    # /proc refuses new files to every user, root included (the tests may run as root).
    settings.MEDIA_ROOT = "/proc/lightmysky-media"
    response = client.get("/readyz")
    assert response.status_code == 503
    (problem,) = response.json()["problems"]
    assert problem.startswith("media folder: cannot write in /proc: ")


def test_readyz_is_503_when_the_media_folder_is_a_file(client, db, settings, tmp_path):
    (tmp_path / "media").write_text("not a folder")
    settings.MEDIA_ROOT = tmp_path / "media" / "videos"
    response = client.get("/readyz")
    assert response.json()["problems"] == [f"media folder: {tmp_path / 'media'} is not a folder"]


@pytest.fixture
def postgres_refusing_the_password() -> Iterator[int]:
    """A server that speaks PostgreSQL's protocol as far as its answer to a wrong password.

    The shared test cluster trusts every local connection, so no password can fail there; this
    answers as PostgreSQL does (an SSL refusal, a password request, then FATAL 28P01), so libpq
    raises its real error and the probe reads its real message."""
    server = socket.create_server(("127.0.0.1", 0))

    def answer(connection: socket.socket) -> None:
        with connection:
            while True:
                length = struct.unpack("!I", connection.recv(4, socket.MSG_WAITALL))[0]
                body = connection.recv(length - 4, socket.MSG_WAITALL)
                code = struct.unpack("!I", body[:4])[0]
                if code in (80877103, 80877104):  # SSLRequest, GSSENCRequest: no
                    connection.sendall(b"N")
                    continue
                connection.sendall(b"R" + struct.pack("!II", 8, 3))  # a cleartext password, please
                connection.recv(1)
                connection.recv(struct.unpack("!I", connection.recv(4))[0] - 4)
                fields = b"".join(
                    key + value.encode() + b"\0"
                    for key, value in [
                        (b"S", "FATAL"),
                        (b"V", "FATAL"),
                        (b"C", "28P01"),
                        (b"M", 'password authentication failed for user "sky"'),
                    ]
                )
                connection.sendall(b"E" + struct.pack("!I", len(fields) + 5) + fields + b"\0")
                return

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def test_readyz_names_a_failed_database_authentication(postgres_refusing_the_password):
    secret = "not-the-password-41"
    env = production_env(f"postgres://sky:{secret}@127.0.0.1:{postgres_refusing_the_password}/sky")
    result = readyz_over_plain_http(env)
    assert "RESULT 503 " in result.stdout, result.stdout + result.stderr
    assert 'database: password authentication failed for user \\"sky\\"' in result.stdout
    assert secret not in result.stdout + result.stderr
