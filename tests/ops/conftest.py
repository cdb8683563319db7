from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import pytest


@pytest.fixture
def server_database(tmp_path: Path):
    """A database of its own for app servers started by a test: a fresh PostgreSQL database
    when the suite runs on PostgreSQL (dropped afterwards), else a SQLite file."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        yield f"sqlite:///{tmp_path / 'servers.sqlite3'}"
        return
    import psycopg

    parts = urlsplit(base)
    name = f"lightmysky_ops_{secrets.token_hex(4)}"
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield parts._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
