"""Error mails to ADMINS that never hold up a request and never flood the inbox.

The mail is composed in the request (the traceback and the request exist only then) and sent by
a thread of its own, with the mailer's timeout (MAILERS), so a mail server that is slow or mute
costs the failing request nothing. One mail per kind of error (exception type or status, and
view) per ERROR_MAIL_INTERVAL seconds: the first one says that more of its kind may follow only
in the log. Health probes are never mailed: a failing /readyz is the balancer's business, every
2 seconds. With METRICS_DIR (under gunicorn) the interval holds for the whole server, every
worker together; without it, for this process.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import queue
import smtplib
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core import mail
from django.http import HttpRequest
from django.views.debug import ExceptionReporter

logger = logging.getLogger("lightmysky.mail")  # not mailed itself: console only
OUTBOX_SIZE = 50
# In-process memory of mails sent, by kind, when there is no METRICS_DIR to share it.
_last_sent: dict[str, float] = {}
_outbox: queue.Queue[tuple[str, str]] = queue.Queue(OUTBOX_SIZE)
_sender: threading.Thread | None = None
_sender_pid = -1
_start_lock = threading.Lock()


def request_id_of(request: HttpRequest | None) -> str | None:
    return getattr(request, "request_id", None)


def is_probe(request: HttpRequest | None) -> bool:
    from lightmysky.health import PROBES

    return request is not None and request.path_info in PROBES


def kind_of(record: logging.LogRecord) -> str:
    """What makes two errors the same for the inbox: the exception's type (or the status when
    there is none) and the view that failed (or the path when none was found)."""
    request = getattr(record, "request", None)
    if record.exc_info and record.exc_info[0] is not None:
        error = f"{record.exc_info[0].__module__}.{record.exc_info[0].__qualname__}"
    else:
        error = f"status {getattr(record, 'status_code', record.levelname)}"
    match = getattr(request, "resolver_match", None)
    where = match.view_name if match else getattr(request, "path_info", record.name)
    return f"{error} in {where}"


def first_of_its_kind(kind: str, *, now: float) -> bool:
    """True, and remember it, if no mail of this kind went out in the last interval: in a file
    of the metrics folder, which every worker of the server shares, else in this process."""
    interval = settings.ERROR_MAIL_INTERVAL
    if settings.METRICS_DIR:
        digest = hashlib.sha256(kind.encode()).hexdigest()[:16]
        marker = Path(settings.METRICS_DIR) / f"mail-{digest}"
        try:
            if now - marker.stat().st_mtime < interval:
                return False
        except FileNotFoundError:
            pass
        try:
            marker.touch()
            os.utime(marker, (now, now))
            return True
        except OSError as error:  # the folder is gone or read-only: remember it here instead
            logger.warning("error mails counted per process: %r", error)
    if now - _last_sent.get(kind, -interval) < interval:
        return False
    _last_sent[kind] = now
    return True


class BackgroundAdminEmailHandler(logging.Handler):
    """A logging handler for the `django` logger: server errors to ADMINS, in the background."""

    def emit(self, record: logging.LogRecord) -> None:
        request = getattr(record, "request", None)
        if not settings.ADMINS or is_probe(request):
            return
        kind = kind_of(record)
        if not first_of_its_kind(kind, now=time.time()):
            return
        try:
            subject, message = compose(record, request, kind)
        except Exception:  # a report that cannot be written must not fail the request
            self.handleError(record)
            return
        try:
            _outbox.put_nowait((subject, message))
        except queue.Full:
            logger.warning("error mail not sent, %s are waiting already: %s", OUTBOX_SIZE, subject)
            return
        _ensure_sender()


def compose(record: logging.LogRecord, request: HttpRequest | None, kind: str) -> tuple[str, str]:
    request_id = request_id_of(request)
    subject = f"{record.levelname}: {record.getMessage()}"
    if request_id:
        subject += f" [{request_id}]"
    exc_info: tuple[Any, Any, Any] = (
        record.exc_info if record.exc_info else (None, record.getMessage(), None)
    )
    report = ExceptionReporter(request, *exc_info, is_email=True).get_traceback_text()
    minutes = max(1, round(settings.ERROR_MAIL_INTERVAL / 60))
    message = "\n".join(
        [
            record.getMessage(),
            "",
            f"Request id: {request_id or '(none)'} (the same id is on this request's log lines)",
            f"Kind: {kind}. Others of this kind in the next {minutes} minute(s) are only logged.",
            "",
            report,
        ]
    )
    return subject.replace("\n", "\\n").replace("\r", "\\r")[:900], message


def _ensure_sender() -> None:
    """Start the sending thread in this process (again after a fork: threads do not follow)."""
    global _sender, _sender_pid
    with _start_lock:
        if _sender is not None and _sender.is_alive() and _sender_pid == os.getpid():
            return
        _sender = threading.Thread(target=_send_forever, name="error-mail", daemon=True)
        _sender_pid = os.getpid()
        _sender.start()


def _send_forever() -> None:
    while True:
        subject, message = _outbox.get()
        try:
            mail.mail_admins(subject, message)
        except (smtplib.SMTPException, OSError) as error:
            logger.warning("error mail not sent (%r): %s", error, subject)
        finally:
            _outbox.task_done()


def wait_until_sent(timeout: float) -> bool:
    """Wait up to `timeout` seconds for the mails composed so far to go out; True if they did."""
    deadline = time.monotonic() + timeout
    while _outbox.unfinished_tasks:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@atexit.register
def _flush_at_exit() -> None:
    """A worker that stops lets the mails it composed go out first, for a few seconds at most."""
    if _outbox.unfinished_tasks and _sender is not None and _sender.is_alive():
        wait_until_sent(timeout=5)
