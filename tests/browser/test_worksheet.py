"""The worksheet in a browser: its answer key waits behind a disclosure on screen, its QR code
scans to the short address printed beside it, and that address leads to a form of small fields
where the paper answers are typed in. At 360 x 740 and 1280 x 800, with and without JavaScript."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from playwright.sync_api import expect

from lessons.models import Lesson
from tests.conftest import SEED_PATH

SIZES = {"phone": {"width": 360, "height": 740}, "desktop": {"width": 1280, "height": 800}}


# The label's text ends on the line of its blank (the blank sits on the text's baseline).
ON_ONE_LINE = """(field) => { const range = document.createRange();
  range.selectNodeContents(field.firstChild);
  const label = range.getBoundingClientRect();
  const blank = field.querySelector(".blank").getBoundingClientRect();
  return Math.abs(label.bottom - blank.bottom) < 10; }"""


def code_of(lesson: Lesson) -> str:
    return lesson.worksheet_code(list(lesson.questions.all()))


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_worksheet_head_keeps_together_on_a_phone(browser, live_server, seed, javascript):
    """Its way back stands alone when there is no print button (no stray separator), and each
    field to fill in keeps its label on the line of its blank."""
    context = browser.new_context(viewport=SIZES["phone"], java_script_enabled=javascript)
    page = context.new_page()
    page.goto(live_server.url + SEED_PATH + "/worksheet")
    way_back = page.locator("p.screen-only").first.inner_text().split()
    assert way_back[-1] == ("worksheet" if javascript else "lesson"), way_back
    fields = page.locator(".worksheet-fields > span")
    assert fields.count() == 2
    for field in fields.all():
        assert field.evaluate(ON_ONE_LINE), field.inner_text()
    context.close()


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_answer_key_waits_behind_a_disclosure(browser, live_server, seed, size, javascript):
    context = browser.new_context(viewport=SIZES[size], java_script_enabled=javascript)
    page = context.new_page()
    page.goto(live_server.url + SEED_PATH + "/worksheet")
    key = page.get_by_role("heading", name="Answer key")
    disclosure = page.locator("summary", has_text="Show the answer key")
    expect(page.locator(".worksheet-question").first).to_be_visible()
    expect(key).to_be_hidden()
    expect(disclosure).to_be_visible()
    disclosure.focus()  # by keyboard: Enter opens it, Enter again closes it
    page.keyboard.press("Enter")
    expect(key).to_be_visible()
    expect(page.get_by_text("Hide the answer key")).to_be_visible()
    expect(page.get_by_text("Show the answer key")).to_be_hidden()
    first = seed.questions.get(position=1)
    expect(page.locator(".answer-key li").first).to_contain_text(
        f"{', '.join(first.correct_letters)} · {first.prompt[:30]}"
    )
    page.keyboard.press("Enter")
    expect(key).to_be_hidden()
    context.close()


@pytest.mark.parametrize("media", ["screen", "print"])
@pytest.mark.parametrize("ratio", [1, 2])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_sheets_qr_code_scans_to_its_short_address(
    browser, live_server, seed, read_qr, size, ratio, media
):
    context = browser.new_context(viewport=SIZES[size], device_scale_factor=ratio)
    page = context.new_page()
    page.goto(live_server.url + SEED_PATH + "/worksheet")
    page.emulate_media(media=media)
    address = f"{settings.SITE_URL}/w/{code_of(seed)}"
    expect(page.locator(".short-address")).to_have_text(address.split("://")[1])
    decoded = read_qr(page.locator(".type-in-qr svg").screenshot())
    context.close()
    assert decoded == [address]


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
@pytest.mark.parametrize("size", list(SIZES))
def test_paper_answers_are_typed_into_one_small_field_each(
    browser, live_server, seed, size, javascript
):
    context = browser.new_context(viewport=SIZES[size], java_script_enabled=javascript)
    page = context.new_page()
    code = code_of(seed)
    page.goto(f"{live_server.url}/w/{code.lower()}")  # the short address, as typed from paper
    expect(page).to_have_url(re.compile(rf"/worksheet/answers\?code={code}$"))
    expect(page.get_by_label("Worksheet code")).to_have_value(code)
    fields = page.locator("input.letters")
    expect(fields).to_have_count(8)
    boxes = [fields.nth(n).bounding_box() for n in range(8)]
    assert all(box and box["width"] <= 100 and box["height"] >= 24 for box in boxes), boxes
    assert boxes[0]["y"] == boxes[1]["y"], "two or more answers to a row, like a paper test"
    questions = list(seed.questions.all())
    for question in questions[:3]:
        letter = question.correct_letters[0].lower()
        page.get_by_label(f"Question {question.position}", exact=True).fill(letter)
    page.get_by_role("button", name="Mark my answers").click()
    expect(page.get_by_role("heading", name="3 of 3 right")).to_be_visible()
    context.close()


def test_a_mistyped_short_address_says_what_to_do(page, live_server, seed):
    page.goto(live_server.url + "/w/ZZZ234")
    expect(page.get_by_role("alert")).to_contain_text("No worksheet has the code ZZZ234 now.")
    page.get_by_label("Worksheet code").fill(code_of(seed))
    page.get_by_role("button", name="Find the worksheet").click()
    expect(page.get_by_role("heading", name="Type in your worksheet")).to_be_visible()
