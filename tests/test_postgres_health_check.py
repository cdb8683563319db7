"""A connection kept between requests on PostgreSQL is checked before each request's first
query: one the server ended is replaced, and a sound one costs the database nothing. Over TCP it
probes an idle server with keepalives."""

from __future__ import annotations

import socket
import time

import pytest
from django.core.signals import request_started
from django.db import connection

from lightmysky.postgresql_backend import base
from tests.conftest import another_postgres_connection

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def server_view_of(pid: int) -> tuple[str, str] | None:
    """The state and last statement the server shows for a backend, or None once it is gone."""
    with another_postgres_connection() as other:
        return other.execute(
            "SELECT state, query FROM pg_stat_activity WHERE pid = %s", [pid]
        ).fetchone()


def next_request() -> None:
    """What the server does before its next request: Django's close_old_connections runs, and
    the kept connection is checked again before the request's first query."""
    request_started.send(sender=None)


def check_before_the_next_request() -> None:
    next_request()
    connection.cursor().close()  # where Django checks it: a request's first cursor


def test_a_sound_kept_connection_is_used_without_a_statement_sent(client):
    check_before_the_next_request()  # one request a moment ago
    assert client.get("/").status_code == 200
    pid = connection.connection.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement before the next request'")

    check_before_the_next_request()

    assert connection.connection.info.backend_pid == pid  # the same connection, kept
    assert server_view_of(pid) == ("idle", "SELECT 'the last statement before the next request'")
    assert client.get("/").status_code == 200


def test_a_connection_unused_for_a_while_is_checked_with_a_statement(client, monkeypatch):
    # A NAT or a load balancer may have forgotten it without telling either end.
    check_before_the_next_request()
    assert client.get("/").status_code == 200
    pid = connection.connection.info.backend_pid
    monkeypatch.setattr(base, "RECENTLY", 0.0)  # every earlier check is too long ago

    check_before_the_next_request()

    assert connection.connection.info.backend_pid == pid
    assert server_view_of(pid) == ("idle", "SELECT 1")


def test_a_connection_the_server_ended_is_replaced_before_the_next_request(client):
    assert client.get("/").status_code == 200
    pid = connection.connection.info.backend_pid
    with another_postgres_connection() as other:  # as a restart, or a pooler letting go, would
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
    for _ in range(100):
        if server_view_of(pid) is None:
            break
        time.sleep(0.05)

    next_request()
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
