"""One screen per question: on a phone and on a laptop, every question of the demo lessons is
answered and left without scrolling."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from lessons.models import Lesson

SIZES = {"phone": {"width": 360, "height": 740}, "laptop": {"width": 1280, "height": 800}}

# Inside the viewport, and not under the action bar at its foot (unless part of it).
INSIDE = """(selectors) => {
  const outside = [];
  const bar = document.querySelector(".practice-card .action-bar");
  for (const selector of selectors) {
    for (const el of document.querySelectorAll(selector)) {
      const box = el.getBoundingClientRect();
      const floor = bar && !bar.contains(el) ? bar.getBoundingClientRect().top : window.innerHeight;
      if (box.top < 0 || box.bottom > floor || box.left < 0 || box.right > window.innerWidth) {
        const text = el.textContent.trim().slice(0, 40);
        outside.push(`${selector} ${text} at ${Math.round(box.top)}–${Math.round(box.bottom)}`);
      }
    }
  }
  return outside;
}"""


@pytest.mark.parametrize(
    ("size", "javascript"), [("phone", True), ("laptop", True), ("phone", False)]
)
def test_every_question_and_its_verdict_fit_one_screen(
    browser, live_server, seed, size, javascript
):
    context = browser.new_context(
        viewport=SIZES[size],
        is_mobile=size == "phone",
        has_touch=size == "phone",
        java_script_enabled=javascript,
    )
    page = context.new_page()
    problems = []
    for lesson in Lesson.objects.filter(status=Lesson.Status.PUBLISHED):
        page.goto(live_server.url + lesson.get_absolute_url() + "/practice")
        for number in range(1, 9):
            expect(page.get_by_role("heading", name=f"Question {number} of 8")).to_be_visible()
            assert page.evaluate("window.scrollY") == 0 or number > 1
            problems += [
                f"{lesson.slug} q{number} on arrival: {where}"
                for where in page.evaluate(
                    INSIDE, ["legend.prompt", ".choice", ".question-form button[type=submit]"]
                )
            ]
            answer_right(page, lesson)
            expect(page.locator(".verdict")).to_be_visible()
            page.wait_for_load_state()  # without JavaScript: the redirect's scroll to #feedback
            problems += [
                f"{lesson.slug} q{number} after answering: {where}"
                for where in page.evaluate(INSIDE, [".verdict", "[data-continue]"])
            ]
            # Continue on the verdict's own row, whatever else the bar says below it
            rows = page.evaluate(
                "['.verdict', '[data-continue]'].map(s => {"
                " const box = document.querySelector(s).getBoundingClientRect();"
                " return [box.top, box.bottom]; })"
            )
            if rows[1][0] >= rows[0][1]:
                problems.append(f"{lesson.slug} q{number}: Continue below the verdict {rows}")
            page.locator("[data-continue]").click()
    context.close()
    assert not problems, "\n".join(problems)


def answer_right(page: Page, lesson: Lesson) -> None:
    prompt = page.locator("legend.prompt").inner_text().strip()
    question = next(q for q in lesson.questions.all() if q.prompt == prompt)
    for choice_id in sorted(question.correct_ids):
        page.locator(f'input[name=choice][value="{choice_id}"]').check()
    page.get_by_role("button", name="Check my answer").click()


def test_back_to_an_answered_question_shows_its_answer(page: Page, live_server, seed):
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    answer_right(page, seed)
    page.locator("[data-continue]").click()
    expect(page.get_by_role("heading", name="Question 2 of 8")).to_be_visible()
    page.go_back()
    expect(page.locator(".verdict")).to_have_text("✓ Right")
    expect(page.get_by_role("button", name="Check my answer")).to_have_count(0)


def test_enter_continues_after_the_verdict(page: Page, live_server, seed):
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    answer_right(page, seed)
    expect(page.locator(".verdict")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Question 2 of 8")).to_be_visible()


def test_the_check_button_waits_while_the_answer_is_on_its_way(page: Page, live_server, seed):
    posts: list[str] = []

    def slow(route):
        posts.append(route.request.method)
        page.wait_for_timeout(800)
        route.continue_()

    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    page.route(
        "**/practice",
        lambda route: slow(route) if route.request.method == "POST" else route.continue_(),
    )
    prompt = page.locator("legend.prompt").inner_text().strip()
    question = next(q for q in seed.questions.all() if q.prompt == prompt)
    page.locator(f'input[name=choice][value="{min(question.correct_ids)}"]').check()
    button = page.get_by_role("button", name="Check my answer")
    button.click()
    expect(button).to_be_disabled()
    button.click(force=True, no_wait_after=True, timeout=1000)
    expect(page.locator(".verdict")).to_be_visible()
    assert posts == ["POST"]


def test_a_pointer_user_sees_no_focus_ring_and_no_key_hint_on_a_touch_phone(
    browser, live_server, seed
):
    phone = browser.new_context(viewport=SIZES["phone"], is_mobile=True, has_touch=True)
    page = phone.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    heading = page.get_by_role("heading", name="Question 1 of 8")
    expect(heading).to_be_focused()
    assert heading.evaluate("el => getComputedStyle(el).outlineStyle") == "none"
    expect(page.locator("[data-keys-hint]")).to_be_hidden()
    phone.close()
    desk = browser.new_context(viewport=SIZES["laptop"])
    page = desk.new_page()
    page.goto(live_server.url + seed.get_absolute_url() + "/practice")
    expect(page.locator("[data-keys-hint]")).to_be_visible()
    page.keyboard.press("Tab")  # a keyboard user: the ring shows where focus lands
    heading = page.get_by_role("heading", name="Question 1 of 8")
    heading.evaluate("el => el.focus()")
    assert heading.evaluate("el => getComputedStyle(el).outlineStyle") != "none"
    desk.close()
