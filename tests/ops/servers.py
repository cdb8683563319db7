"""Real app servers for operations tests: gunicorn processes on loopback ports of their own."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
SECRET = "operations-test-secret-key-" + "x" * 40


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def deploy(env: dict[str, str], *, root: Path = ROOT) -> None:
    """What a deployment does before starting its servers."""
    manage(env, "migrate", "--no-input", "-v0", root=root)
    manage(env, "collectstatic", "--no-input", "-v0", root=root)
    manage(env, "load_demo", root=root)


def production_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a production deployment behind a TLS-ending proxy, on loopback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env |= {
        "DEBUG": "0",
        "SECRET_KEY": SECRET,
        "DATABASE_URL": database_url,
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "SITE_URL": "http://127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        # One folder per test run, under the system's temporary folder, not in the project.
        "STATIC_ROOT": str(Path(tempfile.gettempdir()) / f"lightmysky-ops-static-{os.getpid()}"),
        "LOG_LEVEL": "WARNING",
    }
    return env | extra


def manage(env: dict[str, str], *args: str, root: Path = ROOT) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@contextlib.contextmanager
def gunicorn(
    env: dict[str, str], *, workers: int = 2, started: list | None = None, root: Path = ROOT
) -> Iterator[str]:
    """A gunicorn serving the site; yields its base URL and always stops it. Its master
    process is appended to `started` when given (to send it signals)."""
    port = free_port()
    process = subprocess.Popen(
        [str(GUNICORN), "-c", "gunicorn.conf.py", "lightmysky.wsgi"],
        cwd=root,
        env=env | {"BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(workers)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    if started is not None:
        started.append(process)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start: {process.stderr.read()}") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """A cookie-keeping HTTP client that, like a browser, can talk to any of several servers."""

    def __init__(self) -> None:
        self.cookies = CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect
        )

    def request(self, url: str, data: dict | None = None) -> tuple[int, str]:
        status, body, _ = self.fetch(url, data)
        return status, body

    def fetch(self, url: str, data: dict | None = None) -> tuple[int, str, str]:
        """(status, body, Location) of one request; redirects are not followed."""
        body = urlencode(data, doseq=True).encode() if data is not None else None
        try:
            with self.opener.open(urllib.request.Request(url, data=body), timeout=30) as response:
                return response.status, response.read().decode(), ""
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.read().decode(), error.headers.get("Location", "")

    def csrf(self) -> str:
        return next(c.value for c in self.cookies if c.name == "csrftoken")


def answer_form(html: str) -> tuple[str, str] | None:
    """The token and the first choice shown (its identity) of the question on a practice page."""
    token = re.search(r'name="token" value="([^"]+)"', html)
    choice = re.search(r'name="choice" value="([0-9a-f]+)"', html)
    return (token[1], choice[1]) if token and choice else None
