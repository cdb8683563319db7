"""Browser tests: Debian's Chromium driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.signals import request_finished, request_started

from lessons.models import Lesson

# Playwright's sync API runs an event loop in the test thread; the ORM calls are still sync.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ZBARIMG = os.environ.get("ZBARIMG", "/usr/bin/zbarimg")
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", "var/browser-artifacts"))


def pytest_collection_modifyitems(config, items):
    """Without Chromium, browser tests are skipped, unless REQUIRE_BROWSER says they must run."""
    here = Path(__file__).parent
    missing = not Path(CHROMIUM).exists()
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            if missing and not os.environ.get("REQUIRE_BROWSER"):
                item.add_marker(pytest.mark.skip(reason=f"no Chromium at {CHROMIUM}"))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


class RequestsInFlight:
    """How many requests the live server is handling, counted by Django's request_started and
    request_finished signals in its threads. The test's own thread is left out: its test
    client sends request_finished for a streamed response only once that is read through."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()
        request_started.connect(self.started, dispatch_uid="browser-requests-started")
        request_finished.connect(self.finished, dispatch_uid="browser-requests-finished")

    def started(self, **kwargs) -> None:
        if threading.current_thread() is not threading.main_thread():
            with self.lock:
                self.count += 1

    def finished(self, **kwargs) -> None:
        if threading.current_thread() is not threading.main_thread():
            with self.lock:
                self.count -= 1

    def wait_until_none(self, *, quiet: float = 0.1, timeout: float = 30) -> None:
        """Until none has been in flight for `quiet` seconds (a request the browser sent just
        now may not have begun); a failure after `timeout`, naming why."""
        deadline = time.monotonic() + timeout
        quiet_since = None
        while time.monotonic() < deadline:
            if self.count:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet:
                return
            time.sleep(0.01)
        pytest.fail(f"{self.count} request(s) still running on the live server after {timeout} s")


REQUESTS = RequestsInFlight()


@pytest.fixture(autouse=True)
def live_requests_end_before_the_database_is_emptied(request):
    """A test may end on a click, closing its page while the live server still answers it.
    The flush that empties the database after the test would then meet that answer's
    transaction: on PostgreSQL the two deadlock (the answer holds its memory row and wants the
    review table; the flush holds the table and wants the row). So the test waits until the
    live server has no request in hand."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")  # set up first, so emptied after this waits
    yield
    REQUESTS.wait_until_none()


@pytest.fixture
def seed(transactional_db) -> Lesson:
    call_command("load_demo", stdout=io.StringIO())
    return Lesson.objects.get(public_id="mt__e-JwIxHek")


@pytest.fixture
def read_qr() -> Callable[[bytes], list[str]]:
    """The texts zbarimg (Debian's zbar-tools) decodes from a PNG: what a phone's camera would
    read. Skipped without zbarimg, unless REQUIRE_BROWSER says the browser tests must run."""
    if not Path(ZBARIMG).exists() and not shutil.which("zbarimg"):
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail(f"no zbarimg at {ZBARIMG}: apt-get install zbar-tools")
        pytest.skip(f"no zbarimg at {ZBARIMG}")
    command = ZBARIMG if Path(ZBARIMG).exists() else "zbarimg"

    def decode(png: bytes) -> list[str]:
        with tempfile.NamedTemporaryFile(suffix=".png") as file:
            file.write(png)
            file.flush()
            found = subprocess.run(
                [command, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", file.name],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        # zbarimg exits 4 when it finds no code; anything else but 0 is a failure of its own.
        assert found.returncode in (0, 4), found.stderr
        return found.stdout.splitlines()

    return decode


@pytest.fixture
def console_errors(page):
    """Console errors and failed requests of the page, checked by each test at its end."""
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    # A request the page itself dropped (it moved on, or a script cancelled a stale lookup)
    # is not a failure; one the server or the network refused is.
    page.on(
        "requestfailed",
        lambda r: (
            problems.append(f"failed request: {r.url} ({r.failure})")
            if r.failure != "net::ERR_ABORTED"
            else None
        ),
    )
    return problems


@pytest.fixture(autouse=True)
def page_console(request) -> list[str]:
    """Everything the page said on its console, printed with a failure."""
    messages: list[str] = []
    if "page" in request.fixturenames:
        page = request.getfixturevalue("page")
        page.on("console", lambda m: messages.append(f"[{m.type}] {m.text}"))
        page.on("pageerror", lambda error: messages.append(f"[pageerror] {error}"))
        page.on("popup", lambda popup: _listen_to_popup(popup, messages))
    request.node.console_messages = messages
    return messages


def _listen_to_popup(popup, messages: list[str]) -> None:
    """A pop-up's console, its errors and every page it loads, for a failure's report (a pop-up
    that stays open after Save shows why here)."""
    popup.on("console", lambda m: messages.append(f"[pop-up {m.type}] {m.text}"))
    popup.on("pageerror", lambda error: messages.append(f"[pop-up pageerror] {error}"))
    popup.on(
        "response",
        lambda r: (
            messages.append(f"[pop-up response] {r.status} {r.url}")
            if r.status >= 400 or r.request.resource_type == "document"
            else None
        ),
    )
    popup.on("requestfailed", lambda r: messages.append(f"[pop-up failed] {r.url} {r.failure}"))
    popup.on("close", lambda _: messages.append("[pop-up closed]"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On failure, keep a screenshot and the console log, and print where, for the CI output."""
    outcome = yield
    report = outcome.get_result()
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and page is not None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{item.name}.png"
        console = "\n".join(getattr(item, "console_messages", [])) or "(nothing)"
        try:
            page.screenshot(path=str(path), full_page=True)
            shot = f"screenshot: {path}"
        except Exception as error:  # the page may be gone; the failure itself matters more
            shot = f"no screenshot: {error}"
        report.sections.append(("browser", f"{shot}\nurl: {page.url}\nconsole:\n{console}"))
