"""Error mails: sent in the background, one per kind of error, never for probes, with the id."""

from __future__ import annotations

import io
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from django.core import mail
from django.test import Client

from lightmysky import errormail

pytestmark = pytest.mark.urls("tests.error_urls")


@pytest.fixture
def admins(db, settings, tmp_path):
    """ADMINS set, and the mails of this test alone remembered (as under gunicorn)."""
    settings.ADMINS = ["ops@example.org"]
    settings.METRICS_DIR = str(tmp_path)
    yield
    assert errormail.wait_until_sent(timeout=15), "the error mails were still being sent"


@pytest.fixture
def visitor() -> Client:
    return Client(raise_request_exception=False)


def sent() -> list[mail.EmailMessage]:
    assert errormail.wait_until_sent(timeout=5)
    return list(mail.outbox)


@pytest.fixture
def mute_mail_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A mail server that accepts connections and never says a word."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()
    for connection in accepted:
        connection.close()


def test_a_mute_mail_server_does_not_slow_the_failing_request(
    admins, visitor, settings, mute_mail_server, caplog
):
    port, accepted = mute_mail_server
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 5},
        }
    }
    settings.ADMINS = []
    visitor.get("/broken")  # the first request of a process pays for its imports
    settings.ADMINS = ["ops@example.org"]
    started = time.monotonic()
    response = visitor.get("/broken")
    took = time.monotonic() - started
    assert response.status_code == 500
    assert took < 1.5, f"the 500 took {took:.2f} s, with a mail timeout of 5 s"
    # The mail was tried all the same, in the background, and its failure is logged.
    assert errormail.wait_until_sent(timeout=10)
    assert len(accepted) == 1
    not_sent = [r.getMessage() for r in caplog.records if "error mail not sent" in r.getMessage()]
    assert len(not_sent) == 1 and "timed out" in not_sent[0]


def test_one_mail_per_kind_of_error_in_the_interval(admins, visitor):
    for _ in range(3):
        assert visitor.get("/broken").status_code == 500
    assert visitor.get("/broken-otherwise").status_code == 500
    subjects = [m.subject for m in sent()]
    assert len(subjects) == 2, subjects
    assert "Internal Server Error: /broken " in subjects[0]
    assert "Internal Server Error: /broken-otherwise " in subjects[1]
    assert "Others of this kind in the next 5 minute(s) are only logged" in mail.outbox[0].body


def test_with_no_interval_every_error_is_mailed(admins, visitor, settings):
    settings.ERROR_MAIL_INTERVAL = 0
    for _ in range(3):
        visitor.get("/broken")
    assert len(sent()) == 3


def test_one_mail_per_kind_in_a_process_without_a_metrics_folder(
    admins, visitor, settings, monkeypatch
):
    settings.METRICS_DIR = ""
    monkeypatch.setattr(errormail, "_last_sent", {})
    for _ in range(3):
        visitor.get("/broken")
    assert len(sent()) == 1


def test_failing_probes_are_never_mailed(admins, visitor, settings):
    settings.ALLOWED_HOSTS = ["other.example.org"]  # SITE_URL's host refused: /readyz is red
    for _ in range(3):
        assert visitor.get("/readyz").status_code == 503
    assert sent() == []
    settings.ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
    visitor.get("/broken")
    assert len(sent()) == 1


@pytest.fixture
def console() -> Iterator[io.StringIO]:
    """What the site writes to stdout, as text lines (LOG_FORMAT=text)."""
    handler = next(h for h in logging.getLogger().handlers if h.name == "console")
    written = io.StringIO()
    previous = handler.setStream(written)
    yield written
    handler.setStream(previous)


def test_the_mail_and_the_tracebacks_log_line_carry_the_request_id(admins, visitor, console):
    request_id = "5f0c8a2b" * 4
    visitor.get("/broken", headers={"X-Request-ID": request_id})
    (message,) = sent()
    assert f"Request id: {request_id}" in message.body
    assert request_id in message.subject
    assert "RuntimeError" in message.body and "a bug for the error-mail tests" in message.body
    (traceback_line,) = [
        line for line in console.getvalue().splitlines() if "Internal Server Error" in line
    ]
    assert traceback_line.endswith(
        f"ERROR django.request Internal Server Error: /broken request_id={request_id}"
    )


def test_a_request_without_an_id_gets_one_in_its_mail_and_its_log_lines(admins, visitor, console):
    visitor.get("/broken")
    (message,) = sent()
    request_id = message.body.split("Request id: ")[1].split()[0]
    assert len(request_id) == 32
    assert f"Internal Server Error: /broken request_id={request_id}" in console.getvalue()
