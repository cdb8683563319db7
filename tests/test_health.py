"""/healthz and /readyz answer over plain HTTP in production, so a probe can see them fail."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings

from tests.ops.servers import ROOT, production_env

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
    assert response.json() == {"ready": False, "problems": ["1 migration(s) not applied"]}


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
