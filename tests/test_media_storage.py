"""Where uploads are kept is chosen by MEDIA_STORAGE_URL: this server's disk, or a bucket."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.test_settings import PRODUCTION
from tests.test_site import ROOT, run_django_check

SHOW = (
    "from django.conf import settings; from django.core.files.storage import default_storage; "
    "print('BACKEND', settings.STORAGES['default']['BACKEND']); "
    "print('URL', default_storage.url('videos/stars.mp4')); "
    "print('MEDIA-SRC', ' '.join(settings.SECURE_CSP['media-src']))"
)


def shown(**env: str) -> dict[str, str]:
    result = run_django_check("shell", "--no-imports", "-c", SHOW, **PRODUCTION, **env)
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)


def test_without_a_storage_url_uploads_go_to_media_root():
    found = shown(MEDIA_ROOT="/srv/lightmysky/media")
    assert found["BACKEND"] == "django.core.files.storage.FileSystemStorage"
    assert found["URL"] == "/media/videos/stars.mp4"
    assert found["MEDIA-SRC"] == "'self'"
    assert shown(MEDIA_STORAGE_URL="file://")["BACKEND"].endswith("FileSystemStorage")


def test_an_s3_url_puts_uploads_in_the_bucket_and_lets_pages_play_them():
    pytest.importorskip("storages")
    found = shown(MEDIA_STORAGE_URL="s3://sky-videos/lessons?custom_domain=media.example.org")
    assert found["BACKEND"] == "storages.backends.s3.S3Storage"
    # Unsigned: rendered pages are cached, a signed link would expire inside them.
    assert found["URL"] == "https://media.example.org/lessons/videos/stars.mp4"
    assert found["MEDIA-SRC"] == "'self' https://media.example.org"

    other_service = shown(
        MEDIA_STORAGE_URL="s3://sky-videos?endpoint_url=https://objects.example.net:9000"
    )
    assert other_service["URL"].startswith("https://objects.example.net:9000/")
    assert other_service["MEDIA-SRC"] == "'self' https://objects.example.net:9000"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://files.example.org/videos", "MEDIA_STORAGE_URL must be file://"),
        ("s3://sky-videos?colour=blue", "unknown option(s) ['colour']"),
        ("s3:///videos", "must name its bucket"),
    ],
)
def test_a_wrong_storage_url_is_explained(url, message):
    pytest.importorskip("storages")
    result = run_django_check(**PRODUCTION, MEDIA_STORAGE_URL=url)
    assert result.returncode != 0
    assert message in result.stderr


def test_an_s3_url_without_django_storages_is_explained():
    # As on a server where the optional package was not installed.
    code = (
        "import sys; sys.modules['storages'] = None; sys.argv = ['manage.py', 'check']; "
        "exec(open('manage.py').read())"
    )
    env = PRODUCTION | {"MEDIA_STORAGE_URL": "s3://sky-videos"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in PRODUCTION} | env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "django-storages is not installed" in result.stderr
