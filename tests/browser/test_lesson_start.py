"""A lesson reaches its questions: on a phone they are one tap away from the lesson's first screen
and from wherever the learner is reading; the Read's parts are listed in an outline."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.test_one_screen import SIZES
from tests.conftest import SEED_PATH


def test_on_a_phone_the_questions_are_one_tap_from_anywhere_in_the_lesson(
    browser, live_server, seed
):
    context = browser.new_context(viewport=SIZES["phone"], is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(live_server.url + SEED_PATH)
    start = page.locator(".lesson-start").get_by_role("link", name="Start the questions")
    box = start.bounding_box()
    assert box and box["y"] + box["height"] <= SIZES["phone"]["height"], box
    # One start button on that screen: the bar that follows the reader waits until it is gone.
    sticky = page.locator(".lesson-sticky-start").get_by_role("link", name="Start the questions")
    expect(sticky).to_be_hidden()

    outline = page.get_by_role("navigation", name="The lesson's parts").get_by_role("link")
    parts = outline.all_inner_texts()
    assert len(parts) >= 4 and parts[-1] == "Then practise", parts
    outline.nth(1).tap()  # the Read's second part, mid-lesson
    page.wait_for_function("window.scrollY > 1000")
    expect(sticky).to_be_visible()
    box = sticky.bounding_box()
    assert box and box["y"] + box["height"] <= SIZES["phone"]["height"] + 1, box
    sticky.tap()
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    # At "Then practise", the lesson's own start button is on screen, so the bar steps aside.
    page.goto(live_server.url + SEED_PATH)
    page.get_by_role("link", name="Start the 8 questions").scroll_into_view_if_needed()
    expect(sticky).to_be_hidden()
    context.close()


def test_on_a_laptop_the_start_is_at_the_top_and_no_bar_follows(browser, live_server, seed):
    context = browser.new_context(viewport=SIZES["laptop"])
    page = context.new_page()
    page.goto(live_server.url + SEED_PATH)
    expect(
        page.locator(".lesson-start").get_by_role("link", name="Start the questions")
    ).to_be_in_viewport()
    expect(page.locator(".lesson-sticky-start")).to_be_hidden()
    context.close()
