"""Log lines as JSON objects, one per line, for log collectors."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

STANDARD = set(vars(logging.makeLogRecord({})))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry |= {key: value for key, value in vars(record).items() if key not in STANDARD}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """Time, level, logger and message, then the request's id when the line is about a request."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        if request_id := getattr(record, "request_id", None):
            line += f" request_id={request_id}"
        return line


class WithRequestId(logging.Filter):
    """Give a line logged about a request (Django's tracebacks carry the request) that request's
    id, so that the traceback is found by the id on its request line and in its error mail."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = getattr(getattr(record, "request", None), "request_id", None)
        if request_id and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True


class WithoutTraceback(logging.Filter):
    """Keep the message, drop the traceback: for expected refusals such as an unknown Host."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        return True
