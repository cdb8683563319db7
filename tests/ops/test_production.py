"""Production mode: deploy checks, security headers, static files, health and logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SEED_PATH as SEED
from tests.ops.servers import ROOT, deploy, production_env


def env_example() -> dict[str, str]:
    values = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def django(env: dict[str, str], code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_the_documented_environment(tmp_path):
    env = production_env(f"sqlite:///{tmp_path / 'deploy-check.sqlite3'}")
    env = {k: v for k, v in env.items() if k not in {"SECURE_SSL_REDIRECT", "SECURE_COOKIES"}}
    example = env_example()
    example.pop("DATABASE_URL")  # checks do not connect; keep the local file
    example.pop("SECRET_KEY")  # the example's placeholder is refused on purpose
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env | example,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


READYZ = (
    "from django.test import Client; r = Client().get('/readyz'); "
    "print('RESULT', r.status_code, r.content.decode())"
)


def result_line(result: subprocess.CompletedProcess) -> str:
    return next((line[7:] for line in result.stdout.splitlines() if line.startswith("RESULT ")), "")


GET_PAGE = """
from django.test import Client
response = Client().get({path!r}, headers={headers!r})
print("STATUS", response.status_code)
for name in {names!r}:
    print("HEADER", name, "=", response.get(name, ""))
"""


@pytest.fixture(scope="module")
def prod_db(tmp_path_factory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("prod") / "db.sqlite3"
    env = production_env(f"sqlite:///{path}")
    deploy(env)
    return env


def headers_of(env, path, names, headers=None):
    result = django(env, GET_PAGE.format(path=path, names=names, headers=headers or {}))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    status = int(next(line for line in lines if line.startswith("STATUS")).split()[1])
    found = {}
    for line in lines:
        if line.startswith("HEADER "):
            name, _, value = line[7:].partition(" = ")
            found[name] = value
    return status, found


def test_pages_carry_strict_security_headers(prod_db):
    names = [
        "Content-Security-Policy",
        "Permissions-Policy",
        "Referrer-Policy",
        "Cross-Origin-Opener-Policy",
        "X-Content-Type-Options",
        "X-Frame-Options",
    ]
    status, headers = headers_of(prod_db, SEED, names)
    assert status == 200
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "http" not in csp
    assert "camera=()" in headers["Permissions-Policy"]
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_https_is_enforced_unless_a_proxy_ends_tls(prod_db):
    env = {k: v for k, v in prod_db.items() if k not in {"SECURE_SSL_REDIRECT", "SECURE_COOKIES"}}
    env["SITE_URL"] = "https://127.0.0.1"
    status, headers = headers_of(env, "/", ["Location"])
    assert status == 301 and headers["Location"].startswith("https://")
    code = (
        "from django.conf import settings; "
        "print('RESULT', settings.SECURE_HSTS_SECONDS, settings.SESSION_COOKIE_SECURE, "
        "settings.CSRF_COOKIE_SECURE, settings.SESSION_COOKIE_HTTPONLY)"
    )
    assert result_line(django(env, code)) == "31536000 True True True"
    proxied = prod_db | {"SECURE_PROXY_SSL_HEADER": "1"}
    status, _ = headers_of(proxied, "/", [], headers={"X-Forwarded-Proto": "https"})
    assert status == 200


def test_static_files_are_hashed_compressed_and_cached_for_a_year(prod_db):
    manifest = json.loads((Path(prod_db["STATIC_ROOT"]) / "staticfiles.json").read_text())["paths"]
    hashed = "/static/" + manifest["css/site.css"]
    status, headers = headers_of(
        prod_db, hashed, ["Cache-Control", "Content-Encoding"], headers={"Accept-Encoding": "gzip"}
    )
    assert status == 200
    assert (
        "max-age=31536000" in headers["Cache-Control"] and "immutable" in headers["Cache-Control"]
    )
    assert headers["Content-Encoding"] == "gzip"


def test_healthz_and_readyz(prod_db):
    assert headers_of(prod_db, "/healthz", [])[0] == 200
    assert headers_of(prod_db, "/readyz", [])[0] == 200


def test_readyz_is_503_with_an_unapplied_migration(tmp_path):
    env = production_env(f"sqlite:///{tmp_path / 'half.sqlite3'}")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "practice", "0001", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    result = django(
        env,
        READYZ,
    )
    assert result_line(result).startswith("503"), result.stdout + result.stderr
    assert "migration(s) not applied" in result_line(result)


def test_readyz_is_503_when_the_database_is_unreachable():
    env = production_env("postgres://nobody@127.0.0.1:1/nothing")
    result = django(
        env,
        READYZ,
    )
    assert result_line(result).startswith("503"), result.stdout + result.stderr
    assert "database unreachable" in result_line(result)


def test_logs_are_one_json_line_per_request_when_asked(prod_db):
    env = prod_db | {"LOG_FORMAT": "json", "LOG_LEVEL": "INFO"}
    result = django(
        env, f"from django.test import Client; Client().get({SEED!r}); Client().get('/nope')"
    )
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    requests = [line for line in lines if line["logger"] == "lightmysky.requests"]
    assert [(r["method"], r["path"], r["status"]) for r in requests] == [
        ("GET", SEED, 200),
        ("GET", "/nope", 404),
    ]
    assert all(isinstance(r["duration_ms"], float) for r in requests)


def test_unhashed_static_names_are_not_cached_for_a_year(prod_db):
    # A changed /static/css/site.css must reach browsers that fetch it by that name.
    status, headers = headers_of(prod_db, "/static/css/site.css", ["Cache-Control"])
    assert status == 200
    assert "immutable" not in headers["Cache-Control"]
    assert "max-age=60" in headers["Cache-Control"], headers
