"""Django's SQLite backend, with writers queued on a lock file beside the database.

SQLite lets one writer in at a time. One that finds the database locked sleeps and tries again,
1 ms later, then 2, 5, 10 and on up to 100 ms (SQLite's busy handler), however soon the lock
is freed. With several gunicorn workers, or threads, answers that arrive together each lost a
millisecond or more waiting for writes that take a tenth of that (docs/performance.md). Here a
writer first takes an exclusive `flock` on `<database>-writers.lock`: the kernel wakes the next
in line the moment the lock is let go, and SQLite's own lock is then free for it.

The file lock only puts this site's writers in line. SQLite's lock still guards the data
against everyone else (a sqlite3 shell, a backup), with its busy timeout. Each connection opens
the file for itself, so threads queue as processes do, and closing the connection, or the
process ending, lets go of it. Unlike SQLite's busy timeout, the queue has no time limit: a
transaction left open holds the other writers until it ends, its connection closes or its
process does (gunicorn ends a worker stuck for GUNICORN_TIMEOUT). For the same reason one
thread must not write through two connections to the same file at once: the site has one.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import weakref

from django.db.backends.sqlite3 import base

logger = logging.getLogger(__name__)

# Statements that write, run in autocommit mode: each is a transaction of its own.
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
# Transactions that take SQLite's write lock when they begin (the site's is IMMEDIATE).
_WRITING_BEGINS = ("IMMEDIATE", "EXCLUSIVE")
# Statements of up to this many characters have their SQLite form remembered; longer ones (bulk
# inserts) are rarely sent twice.
_REMEMBERED_STATEMENT_LENGTH = 8192


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._writers_lock: int | None = None
        self._writers_lock_close: weakref.finalize | None = None

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        if not self.is_in_memory_db():
            self._writers_lock_let_go()
            path = f"{self.settings_dict['NAME']}-writers.lock"
            try:
                # Read-only is enough to lock it, also when another user (root running a
                # command, say) made it.
                self._writers_lock = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
            except OSError as error:
                logger.warning("SQLite's writers wait in SQLite's busy handler: %s", error)
                return connection
            # Closed with the connection; or with this object, when a thread that ends leaves
            # its connection to the garbage collector. Closing the file lets go of the lock.
            self._writers_lock_close = weakref.finalize(self, os.close, self._writers_lock)
        return connection

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=QueuedWritesCursor)
        cursor.writers = self
        return cursor

    def _close(self):
        try:
            super()._close()
        finally:
            self._writers_lock_let_go()

    def _writers_lock_let_go(self) -> None:
        if self._writers_lock_close is not None:
            self._writers_lock_close()
        self._writers_lock = self._writers_lock_close = None

    def writers_lock_take(self) -> None:
        if self._writers_lock is None:
            return
        try:
            fcntl.flock(self._writers_lock, fcntl.LOCK_EX)
        except OSError as error:  # a file system without flock (some network ones)
            logger.warning("SQLite's writers wait in SQLite's busy handler: %s", error)
            self._writers_lock_let_go()

    def writers_lock_free(self) -> None:
        if self._writers_lock is not None:
            fcntl.flock(self._writers_lock, fcntl.LOCK_UN)

    def _start_transaction_under_autocommit(self):
        writes = self.transaction_mode in _WRITING_BEGINS
        if writes:
            self.writers_lock_take()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            if writes:
                self.writers_lock_free()
            raise

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self.writers_lock_free()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self.writers_lock_free()


@functools.lru_cache(maxsize=256)
def _in_qmark_style(query: str) -> str:
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class QueuedWritesCursor(base.SQLiteCursorWrapper):
    """A write outside a transaction waits its turn too. SQLite's write lasts until the rows
    it returns (RETURNING) are read, so they are read at once, before the turn is let go, and
    handed out from here."""

    writers: DatabaseWrapper
    _rows: list | None = None  # a write's returned rows, not yet fetched

    def execute(self, query, params=None):
        self._rows = None
        if not (self.writers.autocommit and query.lstrip()[:7].upper().startswith(_WRITES)):
            return super().execute(query, params)
        self.writers.writers_lock_take()
        try:
            super().execute(query, params)
            if self.description is not None:
                self._rows = super().fetchall()
        finally:
            self.writers.writers_lock_free()
        return self

    def convert_query(self, query, *, param_names=None):
        # Django rewrites each statement's %s into SQLite's ? with a regular expression: 31 µs
        # for the practice page's longest statement (1,400 characters). Pages send the same few
        # statements again and again, so each one's rewriting is remembered.
        if param_names is None and len(query) <= _REMEMBERED_STATEMENT_LENGTH:
            return _in_qmark_style(query)
        return super().convert_query(query, param_names=param_names)

    def fetchone(self):
        if self._rows is None:
            return super().fetchone()
        return self._rows.pop(0) if self._rows else None

    def fetchmany(self, size=None):
        size = self.arraysize if size is None else size
        if self._rows is None:
            return super().fetchmany(size)
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    def fetchall(self):
        if self._rows is None:
            return super().fetchall()
        rows, self._rows = self._rows, []
        return rows

    def __next__(self):
        if self._rows is None:
            return super().__next__()
        if not self._rows:
            raise StopIteration
        return self._rows.pop(0)
