"""/healthz and /readyz answer over plain HTTP in production, so a probe can see them fail."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings

from lightmysky.release import release
from practice.models import Review
from tests.ops.servers import ROOT, production_env
from tests.practice.helpers import current_question, practice_url

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
    }


def test_readyz_is_503_over_plain_http_when_the_database_is_unreachable():
    # The documented production environment, whose SSL redirect is on by default.
    env = production_env("postgres://nobody@127.0.0.1:1/nothing")
    del env["SECURE_SSL_REDIRECT"]
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", PLAIN_HTTP_READYZ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "RESULT 503 " in result.stdout, result.stdout + result.stderr
    assert "database unreachable" in result.stdout


@override_settings(SECURE_SSL_REDIRECT=True, ALLOWED_HOSTS=["lightmysky.example.org"])
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
    }


@override_settings(RATE_LIMIT_REDIS_URL=DEAD_REDIS)
def test_answers_go_through_uncounted_when_the_cache_is_down(client, demo, caplog):
    question, token = current_question(client, practice_url(demo))
    response = client.post(
        practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
    )
    assert response.status_code == 302
    assert Review.objects.count() == 1
    assert any("rate limit not counted" in r.getMessage() for r in caplog.records)
