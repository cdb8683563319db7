"""Django's PostgreSQL backend, with a health check that needs no round trip when it can.

A connection kept between requests (CONN_MAX_AGE) is checked before a request's first query
(CONN_HEALTH_CHECKS): Django sends `SELECT 1` and waits for the answer, a round trip that cost a
lesson page a third of its database time. A server that ends a connection (a restart, an idle
timeout, a pooler letting go of a client) tells the client so, or its kernel closes the socket:
either way the socket has something to read. An idle connection with nothing to read is used
as it is; one with something to read, or in any other state, gets Django's `SELECT 1`.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self):
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and self._idle_with_nothing_to_read()
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def _idle_with_nothing_to_read(self) -> bool:
        connection = self.connection
        if connection.closed or connection.info.transaction_status != TransactionStatus.IDLE:
            return False
        poll = select.poll()
        poll.register(connection.fileno(), select.POLLIN | select.POLLPRI)
        return not poll.poll(0)
