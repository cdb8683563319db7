"""Django's PostgreSQL backend, with a health check that needs no round trip when it can.

A connection kept between requests (CONN_MAX_AGE) is checked before a request's first query
(CONN_HEALTH_CHECKS): Django sends `SELECT 1` and waits for the answer, a round trip that cost
a visitor's page a quarter of its CPU under load (docs/performance.md, tenth pass). A server
that ends a connection (a restart, an idle timeout, a pooler letting go of a client) tells the
client so, or its kernel closes the socket: either way the socket has something to read. So a
connection that is idle, was checked a moment ago and has nothing to read is used as it is.
Anything else gets Django's `SELECT 1`: a connection that sat unused for longer than RECENTLY
may have been forgotten by a NAT or a load balancer between here and the database, which tells
neither end.
"""

from __future__ import annotations

import select
import time

import psycopg
from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus

# Well under the idle timeouts of NATs and load balancers (AWS's 350 s, Azure's 4 minutes).
RECENTLY = 30.0  # seconds


class DatabaseWrapper(base.DatabaseWrapper):
    _checked_at = float("-inf")  # when this connection was last checked, or made

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        self._checked_at = time.monotonic()
        return connection

    def close_if_health_check_failed(self):
        if self.connection is None or not self.health_check_enabled or self.health_check_done:
            return
        now = time.monotonic()
        recently_checked = now - self._checked_at < RECENTLY
        self._checked_at = now
        if recently_checked and self._idle_with_nothing_to_read():
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def _idle_with_nothing_to_read(self) -> bool:
        connection = self.connection
        if connection.closed or connection.info.transaction_status != TransactionStatus.IDLE:
            return False
        try:
            poll = select.poll()
            poll.register(connection.fileno(), select.POLLIN | select.POLLPRI)
            return not poll.poll(0)
        except (AttributeError, OSError, psycopg.Error):  # no poll() here (Windows); a bad fd
            return False
