"""Typing in the header's search replaces the page with its results, in a real browser."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect


def test_typing_a_search_makes_the_whole_page_the_search(
    page: Page, live_server, seed, console_errors
):
    """The address, the title, the live region and the footer's link to the Markdown twin all
    follow what typing put in the page (the footer kept the home page's twin: second review of
    stop 69)."""
    page.goto(live_server.url + "/")
    page.locator("#site-search-q").fill("pipeline")
    expect(page).to_have_url(re.compile(r"/search\?q=pipeline$"))
    expect(page).to_have_title(re.compile("^“pipeline” · Search"))
    expect(page.locator("#search-status")).to_contain_text(re.compile(r"\d+ lessons?"))
    twin = page.get_by_role("link", name="This page in Markdown, for AI agents")
    expect(twin).to_have_attribute("href", "/search.md?q=pipeline")
    assert console_errors == []
