"""A SQLite database file replaced or moved under a running site.

bin/restore writes a backup into the live file, so the workers' open connections see it. A file
put in its place with `mv` or `cp --remove-destination`, or the file moved away, would leave each
worker's kept connection (CONN_MAX_AGE) on the old file, writing answers into a file that is no
longer the database. So each connection remembers the file it opened (device and inode); at the
start of every request, a kept connection whose path now names another file is closed, and the
request opens the new one. While no file is at the path, /readyz says so (a connection opened
then would make an empty database there).
"""

from __future__ import annotations

import logging
import os

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

logger = logging.getLogger(__name__)


def _path(wrapper: BaseDatabaseWrapper) -> str | None:
    """The file a SQLite connection opens; None for other databases and in-memory ones."""
    if wrapper.vendor != "sqlite":
        return None
    name = str(wrapper.settings_dict["NAME"])
    return None if name == ":memory:" or name.startswith("file:") else name


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


def remember_file(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    """On connection_created: note which file the new connection opened."""
    if (path := _path(connection)) is not None:
        connection.opened_file = _identity(path)  # type: ignore[attr-defined]


def reopen_if_replaced(**kwargs: object) -> None:
    """On request_started: close each kept SQLite connection whose path names another file now."""
    for wrapper in connections.all(initialized_only=True):
        path = _path(wrapper)
        if path is None or wrapper.connection is None or wrapper.in_atomic_block:
            continue
        opened = getattr(wrapper, "opened_file", None)
        current = _identity(path)
        if opened is not None and current is not None and current != opened:
            logger.warning("the database file %s was replaced: reopening it", path)
            wrapper.close()


def database_file_problem() -> str | None:
    """For /readyz: the default database's file is missing (a replaced one was reopened when
    the request started)."""
    if (path := _path(connections["default"])) is not None and _identity(path) is None:
        return f"database file {path} is missing: moved or deleted while the site runs"
    return None
