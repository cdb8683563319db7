"""Connections kept between requests on PostgreSQL (CONN_MAX_AGE with CONN_HEALTH_CHECKS): one
the server ended is replaced before the next request uses it, and over TCP an idle connection
probes the server with keepalives."""

from __future__ import annotations

import socket
import time

import pytest
from django.core.signals import request_started
from django.db import connection

from tests.conftest import another_postgres_connection

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def backend_is_gone(pid: int) -> bool:
    with another_postgres_connection() as other:
        return (
            other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone() is None
        )


def test_a_connection_the_server_ended_is_replaced_before_the_next_request(client):
    assert client.get("/").status_code == 200
    pid = connection.connection.info.backend_pid
    with another_postgres_connection() as other:  # as a restart, or a pooler letting go, would
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
    for _ in range(100):
        if backend_is_gone(pid):
            break
        time.sleep(0.05)

    request_started.send(sender=None)  # what the server does before its next request
    response = client.get("/")

    assert response.status_code == 200
    assert connection.connection.info.backend_pid != pid


def test_a_tcp_connection_probes_the_server_when_idle():
    if connection.settings_dict["HOST"].startswith("/"):
        pytest.skip("a Unix socket has no keepalives")
    connection.ensure_connection()
    sock = socket.socket(fileno=connection.connection.fileno())
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 60
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 3
    finally:
        sock.detach()  # the socket stays the connection's
