"""Settings read the way operators write them."""

from __future__ import annotations

from pathlib import Path

from lightmysky.settings import database_from_url


def test_a_sqlite_url_with_three_slashes_is_relative_and_with_four_absolute():
    assert database_from_url("sqlite:///./prod.sqlite3")["NAME"] == Path("prod.sqlite3")
    assert database_from_url("sqlite:///var/site.sqlite3")["NAME"] == Path("var/site.sqlite3")
    assert database_from_url("sqlite:////srv/site.sqlite3")["NAME"] == Path("/srv/site.sqlite3")
