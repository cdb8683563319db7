"""Days are the learner's own: a browser in Los Angeles counts "tomorrow", the "Coming due"
chart and the sky table's dates by Los Angeles's midnights, as it writes its times."""

from __future__ import annotations

from datetime import UTC, datetime

import time_machine
from playwright.sync_api import expect

from practice.models import Memory
from tests.browser.pages import round_played_to_its_end

# 06:00 UTC on Wednesday 9 December is 22:00 on Tuesday 8 December in Los Angeles.
NOW = datetime(2026, 12, 9, 6, 0, tzinfo=UTC)
DUES = {
    1: datetime(2026, 12, 9, 12, 0, tzinfo=UTC),  # later today in UTC; LA: Wednesday 04:00
    2: datetime(2026, 12, 11, 3, 0, tzinfo=UTC),  # Friday in UTC; LA: Thursday 19:00
}
LATER = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)  # in 11 days in UTC, 12 in LA (04:00)


def test_a_browser_in_los_angeles_counts_its_own_days(browser, live_server, seed):
    with time_machine.travel(NOW, tick=True):
        context = browser.new_context(timezone_id="America/Los_Angeles")
        page = context.new_page()
        round_played_to_its_end(page, live_server.url)
        for memory in Memory.objects.filter(question__lesson=seed).select_related("question"):
            memory.due = DUES.get(memory.question.position, LATER)
            memory.save(update_fields=["due"])

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
        elsewhere.close()
