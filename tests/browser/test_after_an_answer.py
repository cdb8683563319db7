"""What a learner sees and hears right after an answer, on a phone and a laptop: after a miss, the
right answer and the start of its explanation inside the verdict's bar; the live region's words;
a flashcard rating's note on the next card."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from playwright.sync_api import Page, expect

from lessons.models import Lesson, Question
from tests.browser.test_one_screen import SIZES

ON_SCREEN = """(el) => { const box = el.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight && box.height > 0; }"""
BOX = "(element) => element.getBoundingClientRect()"
# Each text the live region holds after a change, as a screen reader would be told it.
HEARD = """() => { window.__heard = []; const region = document.getElementById('answer-status');
  new MutationObserver(() => window.__heard.push(region.textContent)).observe(
    region, { childList: true, subtree: true, characterData: true }); }"""


def question_on_screen(page: Page, lesson: Lesson) -> Question:
    prompt = page.locator("legend.prompt").inner_text().strip()
    return next(q for q in lesson.questions.all() if q.prompt == prompt)


def answer_wrong(page: Page, lesson: Lesson) -> Question:
    question = question_on_screen(page, lesson)
    wrong = next(c["id"] for c in question.choices if not c["correct"])
    page.locator(f'input[name=choice][value="{wrong}"]').check()
    page.get_by_role("button", name="Check my answer").click()
    return question


def answer_right(page: Page, lesson: Lesson, *, guessed: bool = False) -> Question:
    question = question_on_screen(page, lesson)
    for choice_id in sorted(question.correct_ids):
        page.locator(f'input[name=choice][value="{choice_id}"]').check()
    if guessed:
        page.get_by_text("I guessed").click()
    page.get_by_role("button", name="Check my answer").click()
    return question


@pytest.mark.parametrize("size", list(SIZES))
def test_after_a_miss_the_right_answer_and_why_are_on_screen_without_scrolling(
    browser, live_server, seed, size
):
    context = browser.new_context(
        viewport=SIZES[size], is_mobile=size == "phone", has_touch=size == "phone"
    )
    page = context.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    problems = []
    for number in range(1, 9):
        expect(page.get_by_role("heading", name=f"Question {number} of 8")).to_be_visible()
        question = answer_wrong(page, seed)
        shown = page.locator(".verdict-bar .verdict-answer")
        expect(shown).to_contain_text("The answer is")
        right = next(c["text"] for c in question.choices if c["correct"])
        expect(shown).to_contain_text(right.replace("**", "").replace("`", "")[:20])
        lead = question.explanation_lead
        expect(shown.locator(".verdict-why")).to_contain_text(lead[:25])
        if not shown.evaluate(ON_SCREEN):
            problems.append(f"q{number}: {shown.bounding_box()}")
        page.locator("[data-continue]").click()
    context.close()
    assert not problems, problems


def test_on_a_phone_a_guess_note_is_shown_whole(browser, live_server, seed):
    """The verdict's bar cuts a miss's explanation short (the whole of it is under "Why"), but
    the note on a right answer marked "I guessed" is said nowhere else: it was cut mid-sentence."""
    context = browser.new_context(viewport=SIZES["phone"], is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    answer_right(page, seed, guessed=True)
    note = page.locator(".verdict-bar .verdict-answer")
    expect(note).to_contain_text("comes back as soon as a missed one would.")
    cut = note.evaluate("(element) => element.scrollHeight > element.clientHeight + 1")
    on_screen = note.evaluate(ON_SCREEN)
    context.close()
    assert not cut and on_screen


def test_one_polite_live_region_says_each_verdict_star_and_progress(page: Page, live_server, seed):
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    region = page.locator("#answer-status")
    expect(region).to_have_attribute("role", "status")
    expect(region).to_have_text("")
    handle = region.element_handle()
    answer_wrong(page, seed)
    expect(region).to_contain_text("Not quite. The answer is ")
    expect(region).to_contain_text("1 of 8 answered, 1 to retry.")
    page.locator("[data-continue]").click()
    expect(page.get_by_role("heading", name="Question 2 of 8")).to_be_visible()
    page.evaluate(HEARD)
    answer_right(page, seed)
    expect(region).to_have_text(
        re.compile(
            r"^Right\. Star kindled\. 2 more right answers in a row light this star; it is "
            r"due on \w+day \d+ \w+ at \d\d:\d\d\. 2 of 8 answered, 1 to retry\.$"
        )
    )
    # Said once: its time is written in the learner's zone before it goes in, not put in
    # in UTC and then rewritten (a second update a screen reader may read again).
    heard = page.evaluate("window.__heard")
    assert len(heard) == 1 and "UTC" not in heard[0], heard
    # The same element all along (a region replaced is a region screen readers may not follow).
    assert page.evaluate("(old) => old === document.getElementById('answer-status')", handle)
    # One region says the answers (the header's search has its own, silent until one types).
    assert page.locator("[role=status]:not(#search-status), [aria-live]").count() == 1


@pytest.mark.parametrize("size", list(SIZES))
def test_a_shown_flashcard_answer_and_its_rating_buttons_are_on_screen(
    browser, live_server, seed, size
):
    """Every card of the seed lesson: once "Show the answer" is tapped, the answer and all
    four rating buttons are on the screen, with the focus on the answer, and the card's front
    above them (not under the strip at the top)."""
    context = browser.new_context(
        viewport=SIZES[size], is_mobile=size == "phone", has_touch=size == "phone"
    )
    page = context.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/flashcards")
    for number in range(1, seed.flashcards.count() + 1):
        expect(page.get_by_role("heading", name=f"Card {number} of")).to_be_visible()
        page.get_by_text("Show the answer").click()
        back = page.locator(".card-face.back")
        expect(back).to_be_focused()
        front = page.locator(".card-face:not(.back)")
        off_screen = [
            element.inner_text().split()[0]
            for element in [front, back, *page.locator("button[name=rating]").all()]
            if not element.evaluate(ON_SCREEN)
        ]
        assert not off_screen, f"card {number}: {off_screen} off screen"
        strip_bottom = page.locator(".practice-strip").evaluate(BOX)["bottom"]
        assert front.evaluate(BOX)["top"] >= strip_bottom, f"card {number}: front under the strip"
        page.get_by_role("button", name="Good").click()
    expect(page.get_by_role("heading", name="cards rated")).to_be_visible()
    context.close()


def test_a_long_flashcard_answer_is_shown_from_its_start(browser, live_server, seed):
    """An answer too long to share the phone's screen with the rating buttons: its start stays
    in view, below the strip at the top, rather than the buttons."""
    card = seed.flashcards.order_by("position").first()
    card.back = " ".join(["A long answer that goes on and on."] * 30)
    card.save()
    context = browser.new_context(viewport=SIZES["phone"], is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/flashcards")
    page.get_by_text("Show the answer").click()
    back = page.locator(".card-face.back")
    expect(back).to_be_focused()
    strip_bottom = page.locator(".practice-strip").evaluate(BOX)["bottom"]
    assert strip_bottom <= back.evaluate(BOX)["top"] < 740
    context.close()


def test_a_flashcard_rating_is_told_on_the_next_card(page: Page, live_server, seed):
    page.goto(live_server.url + seed.get_absolute_url() + "/flashcards")
    page.get_by_text("Show the answer").click()
    page.get_by_role("button", name="Good").click()
    expect(page.get_by_role("heading", name="Card 2 of")).to_be_visible()
    expect(page.locator(".rated-note")).to_contain_text("You rated the last card Good.")
    expect(page.locator(".rated-note")).to_contain_text("Star kindled")
    expect(page.locator("#answer-status")).to_have_text(
        re.compile(
            r"^You rated the last card Good: star kindled\. 3 more ratings of Hard or better "
            r"in a row light this star; it is due on \w+day \d+ \w+ at \d\d:\d\d\.$"
        )
    )


def test_on_a_phone_a_star_put_out_is_said_in_full_beside_the_verdict(browser, live_server, seed):
    """A star change, "Star unlit", is read whole in the verdict's bar, not
    drawn under its Continue button."""
    context = browser.new_context(viewport=SIZES["phone"], is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    prompt = answer_right(page, seed).prompt
    expect(page.locator(".verdict-bar .reward")).to_have_text("Star kindled")
    with time_machine.travel(timezone.now() + timedelta(days=3), tick=True):
        page.goto(live_server.url + "/review")
        expect(page.locator("legend.prompt")).to_have_text(prompt)
        answer_wrong(page, seed)
        reward = page.locator(".verdict-bar .reward")
        expect(reward).to_have_text("Star unlit")
        assert reward.evaluate("el => el.scrollWidth <= el.clientWidth"), "text cut off"
        assert reward.evaluate(ON_SCREEN)
        button = page.locator(".verdict-bar [data-continue]").bounding_box()
        box = reward.bounding_box()
        assert box and button and box["x"] + box["width"] <= button["x"], (box, button)
    context.close()


# The share of the screen the bars that stay put take, wherever the page is scrolled to.
BARS_COVER = """() => {
  const bars = [...document.querySelectorAll(".practice-strip, .verdict-bar")];
  const covered = bars.map((bar) => { const box = bar.getBoundingClientRect();
    return Math.max(0, Math.min(box.bottom, innerHeight) - Math.max(box.top, 0)); });
  return covered.reduce((a, b) => a + b, 0) / innerHeight; }"""


@pytest.mark.parametrize("size", [{"width": 640, "height": 400}, {"width": 740, "height": 360}])
def test_on_a_short_screen_the_bars_scroll_away_and_the_verdict_comes_first(
    browser, live_server, seed, size
):
    """A page zoomed to 200 % or a phone on its side: the strip and the verdict's bar took half
    the screen, wherever one scrolled to read the choices and why."""
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    answer_wrong(page, seed)
    verdict = page.locator(".verdict-bar .verdict")
    expect(verdict).to_be_focused()
    assert verdict.evaluate(ON_SCREEN)
    page.locator(".explanation").scroll_into_view_if_needed()
    covered = page.evaluate(BARS_COVER)
    context.close()
    assert covered <= 0.25, covered
