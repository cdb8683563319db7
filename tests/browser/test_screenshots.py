"""Pictures for the README, taken by the tests so they always show the site as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.pages import answer_first_question
from tests.conftest import SEED_PATH

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.mark.screenshots
def test_screenshots_for_the_readme(browser, live_server, seed):
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1100, "height": 900}, reduced_motion="reduce")
    page = context.new_page()
    page.goto(live_server.url + SEED_PATH)
    page.screenshot(path=str(SHOTS / "lesson.png"))
    answer_first_question(page, live_server.url)
    page.locator("#practice-card").screenshot(path=str(SHOTS / "question-feedback.png"))
    page.locator("#practice-card a.button").click()
    for _ in range(7):
        page.locator("input[name=choice]").nth(2).check()
        page.get_by_role("button", name="Check my answer").click()
        expect(page.locator("#feedback")).to_be_visible()
        page.locator("#practice-card a.button").click()
    page.goto(live_server.url + "/sky")
    page.locator(".sky-figure").screenshot(path=str(SHOTS / "sky.png"))
    context.close()
    phone = browser.new_context(
        viewport={"width": 360, "height": 740},
        is_mobile=True,
        has_touch=True,
        reduced_motion="reduce",
    )
    page = phone.new_page()
    page.goto(live_server.url + SEED_PATH + "/practice")
    expect(page.get_by_role("button", name="Check my answer")).to_be_visible()
    page.screenshot(path=str(SHOTS / "question-phone.png"))
    phone.close()
    for name in ("lesson.png", "question-feedback.png", "sky.png", "question-phone.png"):
        assert (SHOTS / name).stat().st_size > 10_000
