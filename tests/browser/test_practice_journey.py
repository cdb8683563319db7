"""A learner practises the seed lesson in a real browser, with and without JavaScript."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import Page, expect

from lessons.models import Lesson, Question
from tests.browser.pages import answer_first_question
from tests.conftest import SEED_PATH as LESSON_PATH


def question_on_screen(page: Page, lesson: Lesson) -> Question:
    prompt = page.locator("legend.prompt").inner_text().strip()
    return next(q for q in lesson.questions.all() if q.prompt == prompt)


def choose(page: Page, question: Question, *, right: bool) -> None:
    choice_id = next(c["id"] for c in question.choices if c["correct"] == right)
    page.locator(f'input[name=choice][value="{choice_id}"]').check()


def test_round_with_javascript_swaps_in_place_to_the_summary(
    page: Page, live_server, seed, console_errors
):
    page.goto(live_server.url + LESSON_PATH)
    page.get_by_role("link", name="Start the 8 questions").click()
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    page.evaluate("window.__sameDocument = true")
    for number in range(1, 9):
        question = question_on_screen(page, seed)
        choose(page, question, right=number != 2)
        page.get_by_role("button", name="Check my answer").click()
        verdict = "Right" if number != 2 else "Not quite"
        expect(page.get_by_role("heading", name=re.compile(verdict))).to_be_visible()
        expect(page.locator(".explanation")).to_be_visible()
        learned = number - 1 if number >= 2 else number
        expect(page.locator("#sky-counter")).to_have_text(f"Your sky: {learned} kindled")
        # The round's count never grows: a miss adds "1 to retry".
        expect(page.locator(".progress-label")).to_have_text(
            f"{number} of 8 answered · 1 to retry" if number >= 2 else "1 of 8 answered"
        )
        page.locator("#practice-card a.button").click()
    expect(page.get_by_role("heading", name="Once more: a question you missed")).to_be_visible()
    choose(page, question_on_screen(page, seed), right=True)
    page.get_by_role("button", name="Check my answer").click()
    page.get_by_role("link", name="See your results").click()
    expect(page.get_by_role("heading", name="Round complete")).to_be_visible()
    expect(page.locator(".score")).to_contain_text("7 of 8")
    assert page.evaluate("window.__sameDocument") is True, "the page was reloaded during the round"
    # The lesson's constellation and the header counter changed in place, without a reload;
    # the seven right first answers kindled their stars (none is lit before a later day), and
    # question 2, missed and then right on its second try (practice: the answer had just been
    # shown), stays missed.
    figcaption = page.locator(f"#constellation-{seed.public_id} figcaption")
    expect(figcaption).to_contain_text("0 lit, 7 kindled")
    expect(figcaption).to_contain_text("0 due, 1 missed")
    expect(page.locator(f"#constellation-{seed.public_id} circle.star.kindled")).to_have_count(7)
    expect(page.locator("#sky-counter")).to_contain_text("7 kindled")
    page.goto(live_server.url + LESSON_PATH)
    expect(figcaption).to_contain_text("0 lit, 7 kindled")
    assert console_errors == []


def test_keyboard_only_learner_answers_with_number_keys_and_enter(page: Page, live_server, seed):
    page.goto(live_server.url + LESSON_PATH + "/practice")
    for number in range(1, 9):
        if number > 1:  # after each swap, focus lands on the next question
            expect(page.get_by_role("heading", name=f"Question {number} of 8")).to_be_focused()
        question = question_on_screen(page, seed)
        # The keys follow the order on screen, which is shuffled: read it from the page.
        right = page.locator(f'input[name=choice][value="{min(question.correct_ids)}"]')
        key = right.get_attribute("data-number") if number % 2 else right.get_attribute("data-key")
        letter = page.locator(f'label:has(input[value="{min(question.correct_ids)}"]) .letter')
        expect(letter).to_have_text(right.get_attribute("data-key").upper())
        page.keyboard.press(key)
        expect(right).to_be_checked()
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name=re.compile("Right"))).to_be_focused()
        page.keyboard.press("Tab")
        expect(page.locator("#practice-card a.button")).to_be_focused()
        page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Round complete")).to_be_focused()


def test_round_without_javascript_works_through_plain_forms(browser, live_server, seed):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + LESSON_PATH + "/practice")
    for number in range(1, 9):
        question = question_on_screen(page, seed)
        choose(page, question, right=True)
        page.get_by_role("button", name="Check my answer").click()
        expect(page).to_have_url(re.compile(rf"/practice\?answered={number}#feedback$"))
        expect(page.get_by_role("heading", name=re.compile("Right"))).to_be_visible()
        if number == 3:  # reloading mid-round resumes it
            page.goto(live_server.url + LESSON_PATH + "/practice")
            expect(page.get_by_role("heading", name="Question 4 of 8")).to_be_visible()
            continue
        page.locator("#practice-card a.button").click()
    expect(page.get_by_role("heading", name="Round complete")).to_be_visible()
    other = browser.new_context(java_script_enabled=False).new_page()
    other.goto(live_server.url + LESSON_PATH + "/practice")
    expect(other.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    context.close()


def test_when_an_item_comes_back_is_in_the_learners_zone_and_the_pages_english(
    browser, live_server, seed
):
    """A browser set to American English in New York: /review's time is New York's, written
    day before month on a 24-hour clock like the rest of the (British English) page."""
    context = browser.new_context(locale="en-US", timezone_id="America/New_York")
    page = context.new_page()
    try:
        answer_first_question(page, live_server.url)
        page.goto(live_server.url + "/review")
        shown = page.locator("time[data-local]")
        expect(shown).not_to_contain_text("UTC")  # rewritten by the page's script
        moment = datetime.fromisoformat(shown.get_attribute("datetime"))
        there = moment.astimezone(ZoneInfo("America/New_York"))
        text = shown.inner_text()
        assert f"{there.day} {there:%B}" in text and f"{there:%H:%M}" in text, text
        assert "AM" not in text and "PM" not in text
    finally:
        context.close()
