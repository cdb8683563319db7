"""No console error, no failed request and no request to another origin, on any page."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.browser.pages import PAGES, open_page


@pytest.mark.parametrize("name", list(PAGES))
def test_page_is_clean(page, live_server, seed, name):
    problems: list[str] = []
    origins: set[str] = set()
    page.on(
        "console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} {r.failure}"))
    page.on("request", lambda r: origins.add(urlsplit(r.url).netloc))
    page.on(
        "response", lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None
    )
    open_page(page, live_server.url, name)
    page.wait_for_load_state("networkidle")
    assert not problems, problems
    assert origins <= {urlsplit(live_server.url).netloc}, origins
