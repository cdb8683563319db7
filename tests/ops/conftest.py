from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from tools.scratch import postgres_database


@pytest.fixture
def server_database(tmp_path: Path):
    """A database of its own for app servers started by a test: a fresh PostgreSQL database
    when the suite runs on PostgreSQL (dropped afterwards), else a SQLite file."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        yield f"sqlite:///{tmp_path / 'servers.sqlite3'}"
        return
    with postgres_database(base, f"lightmysky_ops_{secrets.token_hex(4)}") as url:
        yield url
