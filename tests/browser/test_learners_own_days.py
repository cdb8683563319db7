"""Days are the learner's own: a browser in Los Angeles counts "tomorrow", the "Coming due"
chart, the sky table's dates and /progress's weeks and dates by Los Angeles's midnights, as it
writes its times."""

from __future__ import annotations

from datetime import UTC, datetime

import time_machine
from playwright.sync_api import expect

from practice import sky
from practice.models import Memory
from tests.browser.pages import round_played_to_its_end
from tests.conftest import SEED_PATH

# 06:00 UTC on Wednesday 9 December is 22:00 on Tuesday 8 December in Los Angeles.
NOW = datetime(2026, 12, 9, 6, 0, tzinfo=UTC)
DUES = {
    1: datetime(2026, 12, 9, 12, 0, tzinfo=UTC),  # later today in UTC; LA: Wednesday 04:00
    2: datetime(2026, 12, 11, 3, 0, tzinfo=UTC),  # Friday in UTC; LA: Thursday 19:00
}
LATER = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)  # in 11 days in UTC, 12 in LA (04:00)
# Stars first lit: in UTC, one in the week of Monday 30 November and two in this week; in LA the
# first lit the Sunday before the chart's weeks, and the second on Sunday 6 December.
LIT = {
    3: datetime(2026, 11, 30, 3, 0, tzinfo=UTC),
    4: datetime(2026, 12, 7, 3, 0, tzinfo=UTC),
    5: datetime(2026, 12, 8, 12, 0, tzinfo=UTC),
}


def test_a_browser_in_los_angeles_counts_its_own_days(browser, live_server, seed):
    with time_machine.travel(NOW, tick=True):
        context = browser.new_context(timezone_id="America/Los_Angeles")
        page = context.new_page()
        round_played_to_its_end(page, live_server.url)
        for memory in Memory.objects.filter(question__lesson=seed).select_related("question"):
            memory.due = DUES.get(memory.question.position, LATER)
            if lit_at := LIT.get(memory.question.position):
                memory.lit_at, memory.evidence = lit_at, sky.CONFIRMED
            memory.save(update_fields=["due", "lit_at", "evidence"])

        page.reload()
        expect(page.locator("[data-comes-back]")).to_have_text(
            "Coming back: 1 tomorrow, 1 in 2 days, 6 in 12 days."
        )

        page.goto(live_server.url + "/sky")
        rows = page.locator(".forecast-table tbody tr")
        expect(rows.nth(0)).to_have_text("Today, with those already due0")
        expect(rows.nth(1)).to_have_text("Wed 9 Dec1")
        expect(rows.nth(2)).to_have_text("Thu 10 Dec1")
        expect(rows.nth(12)).to_have_text("Sun 20 Dec6")
        bars = page.locator(".forecast [data-bar]")
        expect(bars.nth(0).locator("[data-day]")).to_have_text("8")
        expect(bars.nth(1).locator(".bar-value")).to_have_text("1")
        expect(bars.nth(12).locator(".bar-value")).to_have_text("6")
        assert bars.nth(12).locator("rect").get_attribute("height") == "96"

        page.goto(live_server.url + "/sky/table")
        dates = page.locator("td time[data-local-date]")
        expect(dates.nth(0)).to_have_text("9 Dec 2026")
        expect(dates.nth(1)).to_have_text("10 Dec 2026")

        page.goto(live_server.url + "/progress")
        weeks = page.locator(".week-table tbody tr td:last-child")
        expect(weeks).to_have_text(["1", "1"])
        expect(page.locator("[data-date-span]")).to_have_text(", all on 8 December 2026")

        # The same learner in a browser on UTC sees the days the server counted.
        elsewhere = browser.new_context(timezone_id="UTC", storage_state=context.storage_state())
        context.close()
        utc = elsewhere.new_page()
        utc.goto(live_server.url + "/sky")
        utc_rows = utc.locator(".forecast-table tbody tr")
        expect(utc_rows.nth(0)).to_have_text("Today, with those already due1")
        expect(utc_rows.nth(11)).to_have_text("Sun 20 Dec6")
        utc.goto(live_server.url + "/sky/table")
        expect(utc.locator("td time[data-local-date]").nth(1)).to_have_text("11 Dec 2026")
        utc.goto(live_server.url + "/progress")
        expect(utc.locator(".week-table tbody tr td:last-child")).to_have_text(["1", "2"])
        expect(utc.locator("[data-date-span]")).to_have_text(", all on 9 December 2026")
        elsewhere.close()


# Whether the page's text said "UTC" at any change: the browser paints only after these checks.
WATCH_FOR_UTC = """() => { window.__saidUtc = [];
  new MutationObserver(() => { if (document.body.textContent.includes("UTC"))
    window.__saidUtc.push(document.body.textContent.match(/.{0,40}UTC/)[0]); }).observe(
    document.body, { childList: true, subtree: true, characterData: true }); }"""


def test_a_verdict_never_shows_its_time_in_utc_even_for_a_moment(page, live_server, seed):
    """The swapped-in verdict carried the server's "…, 08:21 UTC" for a frame or more, until
    htmx settled and the script wrote it in the learner's zone."""
    page.goto(live_server.url + SEED_PATH + "/practice")
    assert "UTC" not in page.locator("body").text_content()
    page.evaluate(WATCH_FOR_UTC)
    page.locator("input[name=choice]").first.check()
    page.get_by_role("button", name="Check my answer").click()
    expect(page.locator("#feedback time[data-local]").first).to_be_attached()
    page.wait_for_timeout(100)  # past htmx's settling
    assert page.evaluate("window.__saidUtc") == []
