from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.test import override_settings

from lightmysky.settings import database_from_url

ROOT = Path(__file__).resolve().parent.parent
# A folder of this test process's own (pytest-xdist's workers never share the file), removed
# when the process ends; manage.py check in production mode needs a database to name.
_CHECK_FOLDER = tempfile.mkdtemp(prefix="lightmysky-check-")
atexit.register(shutil.rmtree, _CHECK_FOLDER, ignore_errors=True)
CHECK_DATABASE_URL = f"sqlite:///{_CHECK_FOLDER}/check.sqlite3"


def run_django_check(*command: str, **env: str) -> subprocess.CompletedProcess:
    """manage.py (check by default) in a fresh process with only the given settings variables."""
    hidden = {"SECRET_KEY", "DEBUG", "DATABASE_URL", "SITE_URL"}
    clean = {k: v for k, v in os.environ.items() if k not in hidden}
    return subprocess.run(
        [sys.executable, "manage.py", *(command or ["check"])],
        cwd=ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_debug_and_secret_key_the_site_refuses_to_start():
    result = run_django_check(DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_without_debug_but_with_a_secret_key_the_site_starts():
    result = run_django_check(
        DEBUG="0",
        SECRET_KEY="x" * 60,
        ALLOWED_HOSTS="example.org",
        SITE_URL="https://example.org",
        DATABASE_URL=CHECK_DATABASE_URL,
    )
    assert result.returncode == 0, result.stderr


def test_debug_is_off_unless_asked_for():
    shown = run_django_check(
        "shell",
        "-c",
        "from django.conf import settings; print('debug', settings.DEBUG)",
        SECRET_KEY="x" * 60,
        SITE_URL="https://example.org",
        DATABASE_URL=CHECK_DATABASE_URL,
    )
    assert "debug False" in shown.stdout, shown.stderr


def test_without_debug_the_public_origin_is_required():
    result = run_django_check(DEBUG="0", SECRET_KEY="x" * 60, ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "SITE_URL is not set" in result.stderr


def test_a_bad_database_url_is_explained():
    result = run_django_check(DEBUG="1", DATABASE_URL="mysql://db/site")
    assert result.returncode != 0
    assert "DATABASE_URL must start with postgres://" in result.stderr


def test_database_url_is_parsed_for_postgresql():
    config = database_from_url("postgres://ann:s%40cret@db.internal:6543/sky?sslmode=require")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("sky", "ann", "s@cret")
    assert (config["HOST"], str(config["PORT"])) == ("db.internal", "6543")
    assert config["OPTIONS"]["sslmode"] == "require"
    assert config["CONN_MAX_AGE"] > 0


def test_robots_txt_keeps_crawlers_out_of_private_pages(client, db):
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert "Disallow: /admin/" in response.content.decode()
    assert "\nSitemap: http://127.0.0.1:8000/sitemap.xml\n" in response.content.decode()
    # A learner's own pages hold nothing private for a crawler, which has no session.
    assert "/review" not in response.content.decode()
    assert "/progress" not in response.content.decode()


def test_favicon_is_an_svg_star(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("favicon.svg")
    svg = client.get(response["Location"])
    svg.close()
    assert svg["Content-Type"].startswith("image/svg+xml")


def test_pages_load_nothing_from_another_origin(client, demo):
    from tests.conftest import SEED_PATH

    for path in ["/", "/learn/computing/", SEED_PATH, SEED_PATH + "/worksheet"]:
        html = client.get(path).content.decode()
        for attribute in ('src="http', 'src="//', 'href="//'):
            assert attribute not in html, (path, attribute)
        assert "/static/django_htmx/htmx" in html


@override_settings(DEBUG=False)
def test_the_500_page_is_in_the_sites_own_style(db):
    from django.test import Client
    from django.urls import path

    def broken(request):
        raise RuntimeError("boom")

    import lightmysky.urls as site_urls

    urlconf = type("urlconf", (), {"urlpatterns": [path("boom", broken), *site_urls.urlpatterns]})
    with override_settings(ROOT_URLCONF=urlconf):
        client = Client(raise_request_exception=False)
        response = client.get("/boom")
    assert response.status_code == 500
    assert "Something went wrong on our side" in response.content.decode()


@pytest.mark.parametrize("path", ["/", "/learn/computing/"])
def test_pages_are_utf8_html_in_british_english(client, demo, path):
    response = client.get(path)
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert '<html lang="en-GB">' in response.content.decode()
