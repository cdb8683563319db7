"""The header's search box: results as the learner types, with htmx, and the same results
from the plain form with JavaScript off."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def test_results_follow_the_typing_without_leaving_the_page(page, live_server, seed):
    page.goto(live_server.url + "/")
    box = page.get_by_role("searchbox", name="Search lessons")
    box.press_sequentially("pipeline bubble", delay=30)
    first = page.locator(".search-hit h2 a").first
    expect(first).to_have_text(seed.title)
    expect(page).to_have_url(re.compile(r"/search\?q=pipeline(\+|%20)bubble$"))
    expect(box).to_be_focused()  # the box was not swapped: the learner can keep typing
    # The header no longer marks "Lessons" as the page the learner is on.
    expect(page.locator("nav a[aria-current]")).to_have_count(0)
    expect(page.locator(".search-hit mark").first).to_have_text(re.compile("pipeline", re.I))
    first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text(seed.title)


def test_the_form_works_without_javascript(browser, live_server, seed):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/sky")
    page.get_by_role("searchbox", name="Search lessons").fill("pipeline bubble")
    page.get_by_role("button", name="Search").click()
    expect(page.locator(".search-hit h2 a").first).to_have_text(seed.title)
    expect(page.get_by_role("searchbox", name="Search lessons")).to_have_value("pipeline bubble")
    context.close()


def test_typing_names_the_page_and_says_how_many_were_found(page, live_server, seed):
    """The title follows the results, and the count is said by a live region the swap does not
    replace (the one inside the results was made anew at every key, and went unread)."""
    page.goto(live_server.url + "/sky")
    region = page.locator("#search-status")
    handle = region.element_handle()
    page.get_by_role("searchbox", name="Search lessons").press_sequentially("pipeline", delay=30)
    expect(page.locator(".search-hit").first).to_be_visible()
    expect(page).to_have_title("“pipeline” · Search · LightMySky")
    found = page.locator(".search-hit").count()
    expect(region).to_have_text(f"{found} lesson{'s' if found > 1 else ''}, best match first.")
    assert region.get_attribute("role") == "status"
    assert page.evaluate("(old) => old === document.getElementById('search-status')", handle)
    assert region.locator("a").count() == 0  # hidden links would be hidden tab stops
    assert page.locator("#main [role=status]").count() == 0
