"""At 360 x 740 nothing scrolls sideways and every control is at least 24 x 24 CSS pixels;
dark mode and reduced motion are honoured."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from lessons.models import Lesson
from practice import scheduling, sky
from practice.models import Memory
from tests.browser.pages import PAGES, answer_first_question, open_page
from tests.conftest import SEED_PATH

PHONE = {"width": 360, "height": 740}

# Controls that are targets of their own. Links inside running text are exempt in WCAG 2.5.8.
SMALL_TARGETS = """() => {
  const controls = document.querySelectorAll(
    'button, select, textarea, summary, input:not([type=hidden]), .button, nav a, .sky-counter'
  );
  const small = [];
  for (const el of controls) {
    // A choice's radio is hidden on phones: the whole card, its label, is the target.
    const target = el.matches('input') && el.closest('label') ? el.closest('label') : el;
    const box = target.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;  // not shown
    const name = el.outerHTML.slice(0, 80);
    if (box.width < 24 || box.height < 24) small.push(`${name} ${box.width}x${box.height}`);
  }
  return small;
}"""


@pytest.mark.parametrize("name", list(PAGES))
def test_phone_width_without_sideways_scrolling_or_tiny_targets(browser, live_server, seed, name):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    open_page(page, live_server.url, name)
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    small = page.evaluate(SMALL_TARGETS)
    context.close()
    assert widths[0] <= widths[1], f"{name} scrolls sideways: {widths}"
    assert not small, small


def test_at_320_px_a_learners_sky_and_home_do_not_scroll_sideways(browser, live_server, seed):
    """The narrowest width WCAG's reflow asks for, with every demo lesson started: a long word
    in a lesson's title ("Asynchronous") beside its picture widened /sky to 330 px."""
    context = browser.new_context(
        viewport={"width": 320, "height": 640}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    for lesson in Lesson.objects.all():
        page.goto(live_server.url + lesson.get_absolute_url() + "/practice")
        page.locator("input[name=choice]").first.check()
        page.get_by_role("button", name="Check my answer").click()
        page.locator("#feedback").wait_for()
    widths = {}
    for path in ("/sky", "/"):
        page.goto(live_server.url + path)
        widths[path] = page.evaluate("document.documentElement.scrollWidth")
    context.close()
    assert widths == {"/sky": 320, "/": 320}


def test_dark_mode_is_honoured(browser, live_server, seed):
    colours = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        page.goto(live_server.url + SEED_PATH)
        colours[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        context.close()
    assert colours["light"] == "rgb(246, 247, 251)"
    assert colours["dark"] == "rgb(11, 16, 38)"


def test_stars_twinkle_and_kindle_only_without_reduced_motion(browser, live_server, seed):
    animations = {}
    for motion in ("no-preference", "reduce"):
        context = browser.new_context(reduced_motion=motion)
        page = context.new_page()
        answer_first_question(page, live_server.url)
        # Whichever choice was first on screen, the star is made kindled, then lit.
        for evidence, drawn in ((sky.KINDLING, "kindled"), (sky.CONFIRMED, "lit")):
            Memory.objects.update(evidence=evidence, last_rating=scheduling.GOOD)
            page.goto(live_server.url + "/sky")
            star = page.locator(f"circle.star.{drawn}").first
            animations[motion, drawn] = star.evaluate("el => getComputedStyle(el).animationName")
        context.close()
    assert animations == {
        ("no-preference", "kindled"): "kindle",
        ("no-preference", "lit"): "twinkle",
        ("reduce", "kindled"): "none",
        ("reduce", "lit"): "none",
    }


def test_a_due_star_is_told_from_a_lit_one_in_the_sky_and_its_legend(browser, live_server, seed):
    """A lit star that comes due is drawn dimmed inside a bright ring of its own colour: the
    legend drew "due" as a full gold star with a gold ring, the same at a glance as "lit"."""
    page = browser.new_page()
    answer_first_question(page, live_server.url)
    two_weeks_ago = timezone.now() - timedelta(days=14)
    Memory.objects.update(
        evidence=sky.CONFIRMED,
        missed=False,
        last_rating=scheduling.GOOD,
        stability=3.0,
        last_review=two_weeks_ago,
        due=two_weeks_ago + timedelta(days=3),
    )
    page.goto(live_server.url + "/sky")
    look = "el => { const s = getComputedStyle(el); return [s.stroke, s.fillOpacity]; }"
    lit, due = (
        page.locator(f".legend circle.star.{classes}").evaluate(look)
        for classes in ("lit:not(.due)", "lit.due")
    )
    in_the_sky = page.locator("circle.star.lit.due[role=img]").first.evaluate(look)
    page.close()
    assert due[0] != lit[0] and float(due[1]) <= 0.5 and float(lit[1]) == 1, (lit, due)
    assert in_the_sky == due, (in_the_sky, due)


def test_a_missed_star_that_comes_due_shows_both_rings_marks(browser, live_server, seed):
    """Missed is a red ring and due a dashed one: a star both missed and due was drawn with the
    missed ring alone, though its title said "due" (outside learner review)."""
    page = browser.new_page()
    answer_first_question(page, live_server.url)
    Memory.objects.update(evidence=sky.NO_EVIDENCE, missed=True, due=timezone.now())
    page.goto(live_server.url + "/sky")
    look = "el => { const s = getComputedStyle(el); return [s.stroke, s.strokeDasharray]; }"
    missed = page.locator(".legend circle.star.missed").evaluate(look)
    both = page.locator("circle.star.missed.due[role=img]").first.evaluate(look)
    page.close()
    assert both[0] == missed[0] and missed[1] == "none" and both[1] != "none", (missed, both)


def test_a_visitors_phone_header_is_two_rows(browser, live_server, seed):
    """At 360 px the brand and the search share a row, and Lessons, Review, Progress and Your
    sky the next: the search on a row of its own and the fourth link on another made the
    header a quarter of the screen (184 px), and every page began that much lower."""
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    page.goto(live_server.url + "/")
    tops = page.evaluate(
        "[...document.querySelectorAll('.brand, .site-search, .nav-list a')]"
        ".map(element => Math.round(element.getBoundingClientRect().top / 20))"
    )
    height = page.locator(".site-header").evaluate("header => header.offsetHeight")
    context.close()
    assert len(tops) == 6 and len(set(tops[:2])) == 1 and len(set(tops[2:])) == 1, tops
    assert height <= 740 / 7


@pytest.mark.parametrize("width", [1024, 1280])
def test_a_long_sky_counter_keeps_a_wide_header_on_one_row(browser, live_server, seed, width):
    """The search box gives way before the sky counter wraps the navigation to a second row
    (which pushed each question down by 36 px once a learner's counts grew)."""
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    answer_first_question(page, live_server.url)
    page.goto(live_server.url + "/sky")
    one_row = page.locator(".site-header").evaluate("header => header.offsetHeight")
    page.locator("#sky-counter > span").evaluate(
        "counter => { counter.textContent = '124 lit · 124 kindled · 124 due'; }"
    )
    tops = page.evaluate(
        "['.brand', '.site-search', '#sky-counter'].map("
        "s => Math.round(document.querySelector(s).getBoundingClientRect().top / 20))"
    )
    height = page.locator(".site-header").evaluate("header => header.offsetHeight")
    context.close()
    assert height == one_row and len(set(tops)) == 1, (height, one_row, tops)


def test_in_forced_colours_a_phone_shows_which_choice_is_picked(browser, live_server, seed):
    """On a phone the radio is hidden and the letter's fill shows the pick; forced colours
    (Windows' contrast themes) drop fills, and every card looked the same."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.emulate_media(forced_colors="active")
    page.goto(live_server.url + SEED_PATH + "/practice")
    page.locator(".choice").nth(1).click()
    look = "el => { const s = getComputedStyle(el); return [s.backgroundColor, s.borderColor]; }"
    picked = page.locator(".choice:has(input:checked)").evaluate(look)
    letters = [page.locator(".choice .letter").nth(n).evaluate(look) for n in (0, 1)]
    other = page.locator(".choice").nth(0).evaluate(look)
    context.close()
    assert letters[1][0] != letters[0][0], letters
    assert picked[1] != other[1], (picked, other)
