"""What the operations checks and tests each need for a server of their own: a free loopback
port and a PostgreSQL database that is dropped afterwards."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def postgres_database(server_url: str, name: str) -> Iterator[str]:
    """A new database `name` on the server of `server_url` (any database's URL); yields its URL
    and drops it, connections and all, whatever happens."""
    import psycopg

    parts = urlsplit(server_url)
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield parts._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
