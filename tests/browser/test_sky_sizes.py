"""The sky at every size: on a 360 x 740 phone a column of readable constellation cards, on a
wide screen the whole canvas with whole names; either way every constellation is a link that
the keyboard reaches."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.pages import sky_after_an_answer
from tests.conftest import SEED_PATH

PHONE = {"width": 360, "height": 740}
WIDE = {"width": 1280, "height": 800}


def test_on_a_phone_the_sky_is_cards_large_enough_to_read(browser, live_server, seed):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    sky_after_an_answer(page, live_server.url)
    expect(page.locator(".sky-figure")).to_be_hidden()
    card = page.locator("a.sky-card")
    expect(card).to_have_count(1)
    expect(card).to_be_visible()
    name = card.locator(".card-name")
    expect(name).to_have_text(seed.title)
    font_size = name.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
    assert font_size >= 14, font_size
    # What was earned comes first, in the star words (the answer was right or missed).
    expect(card.locator(".card-counts")).to_have_text(
        re.compile(r"^0 lit, (1 kindled, 15|0 kindled, 16) unlit of 16(; 1 missed)?$")
    )
    # The card draws the whole sky's own stars (an SVG <use> of them), scaled to the card.
    sizes = card.locator("svg").evaluate(
        "svg => { const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;"
        " const stars = document.querySelectorAll(svg.querySelector('use').getAttribute('href')"
        " + ' circle.star');"
        " return [...stars].map(s => 2 * s.r.baseVal.value * scale); }"
    )
    assert len(sizes) == seed.questions.count() + seed.flashcards.count()
    assert min(sizes) >= 6, sizes
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    card.tap()
    expect(page).to_have_url(live_server.url + SEED_PATH)
    context.close()


def test_on_a_wide_screen_names_are_whole_and_the_keyboard_reaches_every_constellation(
    browser, live_server, seed
):
    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    sky_after_an_answer(page, live_server.url)
    canvas = page.locator(".sky-figure svg").bounding_box()
    assert canvas
    for box in page.locator(".sky-figure text.constellation-name").evaluate_all(
        "names => names.map(n => { const b = n.getBoundingClientRect();"
        " return [b.left, b.right, b.bottom]; })"
    ):
        left, right, bottom = box
        assert canvas["x"] <= left and right <= canvas["x"] + canvas["width"], box
        assert bottom <= canvas["y"] + canvas["height"], box
    links = page.locator(".sky-figure a.constellation-link")
    expected = set(links.evaluate_all("links => links.map(a => a.getAttribute('href'))"))
    assert len(expected) == 3
    reached = set()
    for _ in range(60):
        page.keyboard.press("Tab")
        href = page.evaluate(
            "() => document.activeElement.closest('.sky-figure') ?"
            " document.activeElement.getAttribute('href') : null"
        )
        if href:
            reached.add(href)
        if reached == expected:
            break
    assert reached == expected
    focused = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("Enter")
    page.wait_for_url(live_server.url + focused)
    context.close()


def test_on_a_wide_screen_the_learners_own_constellations_get_the_room(browser, live_server, seed):
    """Above the whole sky, each started lesson's constellation is drawn large, its stars more
    than twice their size on the map (where unstarted outlines take as much room)."""
    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    sky_after_an_answer(page, live_server.url)
    card = page.locator("a.sky-card")
    expect(card).to_have_count(1)
    drawing = card.locator("svg").bounding_box()
    whole_sky = page.locator(".sky-figure svg").bounding_box()
    assert drawing and whole_sky and drawing["width"] >= 240, drawing
    assert drawing["y"] < whole_sky["y"]  # first
    star_on_card = card.locator("svg").evaluate(
        "svg => { const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;"
        " const star = document.querySelector(svg.querySelector('use').getAttribute('href')"
        " + ' circle.star'); return 2 * star.r.baseVal.value * scale; }"
    )
    star_on_map = page.locator(".sky-figure circle.star").first.evaluate(
        "star => star.getBoundingClientRect().width"
    )
    assert star_on_card >= 2 * star_on_map and star_on_card >= 10, (star_on_card, star_on_map)
    expect(page.get_by_role("heading", name="The whole sky")).to_be_visible()
    # On the map too, a lesson not started is a small outline beside the one started.
    started = page.locator(f"#stars-{seed.public_id}").bounding_box()
    outlines = page.locator(".sky-figure a.not-started circle.outline").evaluate_all(
        "circles => circles.map(c => c.getBoundingClientRect().width)"
    )
    assert started and outlines and max(outlines) < 0.75 * started["width"], (started, outlines)
    context.close()
