"""The lesson form in Chromium: questions reordered by dragging and by keyboard, choice slots
behind "Add a choice", live Markdown previews, flashcards at laptop and tablet widths, and the
Area pop-up, all under the site's strict CSP."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import Page, expect

from lessons.models import Lesson, Subject
from tests.browser.pages import WCAG_TAGS
from tests.practice.helpers import finish_round

PASSWORD = "a long admin password"


def log_in(page: Page, base: str) -> None:
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    page.goto(base + "/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def positions(page: Page) -> list[str]:
    return [page.input_value(f"#id_questions-{i}-position") for i in range(8)]


def test_questions_reorder_by_dragging_and_by_keyboard(page, live_server, seed, console_errors):
    log_in(page, live_server.url)
    by_position = dict(seed.questions.values_list("position", "pk"))
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    assert positions(page) == [str(n) for n in range(1, 9)]

    order = page.locator(".question-order li")
    order.nth(2).drag_to(order.nth(0))
    assert positions(page)[:3] == ["2", "3", "1"]  # question 3 is now first
    expect(page.locator("[data-reorder-status]")).to_contain_text("is now question 1 of 8.")
    expect(order.nth(0).locator(".question-order-number")).to_have_text("1")

    order.nth(1).get_by_role("button", name="Move down").focus()
    page.keyboard.press("Enter")  # the old question 1, now second, goes one further down
    assert positions(page)[:3] == ["3", "2", "1"]
    expect(order.nth(2).get_by_role("button", name="Move down")).to_be_focused()
    # the blocks follow the list, so the page reads in the new order
    ids = page.eval_on_selector_all(
        "#questions-group .inline-related:not(.empty-form)", "rows => rows.map(r => r.id)"
    )
    assert ids[:3] == ["questions-2", "questions-1", "questions-0"]

    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    now = dict(seed.questions.values_list("pk", "position"))
    assert [now[by_position[n]] for n in (1, 2, 3)] == [3, 2, 1]
    assert not console_errors, console_errors


def test_unused_choices_wait_behind_add_a_choice(page, live_server, seed, console_errors):
    log_in(page, live_server.url)
    page.goto(live_server.url + "/admin/lessons/lesson/add/")
    question = page.locator("#questions-0")
    expect(question.locator(".field-choice_3_text").first).to_be_visible()
    expect(question.locator(".form-row.field-choice_4_text")).to_be_hidden()
    expect(question.locator(".form-row.field-choice_5_text")).to_be_hidden()
    question.get_by_role("button", name="Add a choice").click()
    expect(question.locator("#id_questions-0-choice_4_text")).to_be_focused()
    # no "why wrong" box on a choice ticked right
    expect(question.locator("#id_questions-0-choice_0_why")).to_be_visible()
    question.locator("#id_questions-0-choice_0_correct").check()
    expect(question.locator("#id_questions-0-choice_0_why")).to_be_hidden()
    assert not console_errors, console_errors


def test_a_markdown_field_previews_beside_itself(page, live_server, seed, console_errors):
    log_in(page, live_server.url)
    page.goto(live_server.url + "/admin/lessons/lesson/add/")
    page.fill("#id_body", "Caches are **fast**.\n\n![A diagram](https://example.org/d.png)")
    row = page.locator(".form-row.field-body")
    row.get_by_role("button", name="Preview").click()
    output = row.locator(".markdown-preview-output")
    expect(output.locator("strong")).to_have_text("fast")
    expect(output).to_contain_text("An image (“A diagram”) is dropped")
    body = page.locator("#id_body").bounding_box()
    preview = output.bounding_box()
    assert preview["x"] >= body["x"] + body["width"]  # beside the field, not under it
    page.fill("#id_body", "Now *slow*.")  # once open, it follows the typing
    expect(output.locator("em")).to_have_text("slow")
    prompt = page.locator(".form-row.field-prompt").first
    page.fill("#id_questions-0-prompt", "Is `key` **kept**?")
    prompt.get_by_role("button", name="Preview").click()
    expect(prompt.locator(".markdown-preview-output code")).to_have_text("key")
    assert not console_errors, console_errors


@pytest.mark.parametrize(("width", "side_by_side"), [(1366, True), (820, False)])
def test_flashcard_faces_fit_the_screen(browser, live_server, seed, width, side_by_side):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    log_in(page, live_server.url)
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    front = page.locator("#id_flashcards-0-front").bounding_box()
    back = page.locator("#id_flashcards-0-back").bounding_box()
    context.close()
    assert back["x"] + back["width"] <= width and front["x"] >= 0
    if side_by_side:
        assert back["x"] >= front["x"] + front["width"] and abs(back["y"] - front["y"]) < 5
    else:
        assert back["y"] >= front["y"] + front["height"]


@pytest.mark.parametrize("width", [1366, 820])
def test_a_questions_own_page_fits_the_screen(browser, live_server, seed, width):
    """At 820 px the question page's choice boxes ran to 871 px (outside editor review)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    log_in(page, live_server.url)
    question = seed.questions.get(position=1)
    page.goto(live_server.url + f"/admin/lessons/question/{question.pk}/change/")
    boxes = page.locator("#question_form input[type=text]:visible, #question_form textarea:visible")
    rights = [box["x"] + box["width"] for box in (b.bounding_box() for b in boxes.all())]
    context.close()
    assert rights and max(rights) <= width, max(rights)


def test_the_area_pop_up_keeps_the_subject_and_fills_its_slug(page, live_server, seed):
    log_in(page, live_server.url)
    subject = Subject.objects.get(slug="computing")
    page.goto(live_server.url + "/admin/lessons/lesson/add/")
    page.select_option("#id_subject", str(subject.pk))
    with page.expect_popup() as opened:
        page.click("#add_id_area")
    popup = opened.value
    expect(popup.locator("#id_subject")).to_have_value(str(subject.pk))
    popup.locator("#id_name").press_sequentially("Systems and Performance")
    expect(popup.locator("#id_slug")).to_have_value("systems-and-performance")
    popup.click("input[name=_save]")
    popup.wait_for_event("close")
    selected = page.locator("#id_area option:checked")
    expect(selected).to_contain_text("Systems and Performance")


def test_the_area_pop_up_keeps_a_subject_just_added_with_its_own_pop_up(page, live_server, seed):
    """Django's pop-up chooses the new subject and tells only jQuery's listeners: the Area
    pop-up then opened with no subject, and saving it said "This field is required" (outside
    editor review)."""
    log_in(page, live_server.url)
    page.goto(live_server.url + "/admin/lessons/lesson/add/")
    with page.expect_popup() as opened:
        page.click("#add_id_subject")
    popup = opened.value
    popup.locator("#id_name").press_sequentially("Astronomy")
    popup.fill("#id_slug", "astronomy")
    popup.click("input[name=_save]")
    popup.wait_for_event("close")
    subject = Subject.objects.get(slug="astronomy")
    expect(page.locator("#id_subject")).to_have_value(str(subject.pk))
    with page.expect_popup() as opened:
        page.click("#add_id_area")
    expect(opened.value.locator("#id_subject")).to_have_value(str(subject.pk))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_checklist_and_reorder_buttons_are_accessible(browser, live_server, seed, scheme):
    Lesson.objects.filter(pk=seed.pk).update(recap="")
    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    log_in(page, live_server.url)
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    results = Axe().run(
        page,
        context={"include": [["#publish-checklist"], [".question-order"], [".field-body"]]},
        options={"runOnly": {"type": "tag", "values": WCAG_TAGS}},
    )
    violations = results.response["violations"]
    context.close()
    assert not violations, [(v["id"], v["help"], v["nodes"][0]["target"]) for v in violations]


def test_the_whole_lesson_page_has_no_wcag_violations_but_djangos_autocomplete(
    page, live_server, seed
):
    """With learners' figures in it: the choices' shares were list items outside any list,
    and the flashcards' boxes (a table row each) had no name. Django's own autocomplete widget
    (select2) is left out: its search box has no label, a known fault of the admin's."""
    finish_round(Client(), seed, [True, False] * 4)
    log_in(page, live_server.url)
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    expect(page.locator(".lesson-analytics")).to_be_visible()
    results = Axe().run(
        page,
        context={"exclude": [[".select2-container"]]},
        options={"runOnly": {"type": "tag", "values": WCAG_TAGS}},
    )
    violations = results.response["violations"]
    assert not violations, [(v["id"], v["help"], v["nodes"][0]["target"]) for v in violations]


def test_moving_a_choice_carries_its_identity_so_a_typo_fix_asks_nothing(
    page, live_server, seed, console_errors
):
    """The editors' review, D3: ↓ on the right choice moves its whole row (the hidden id too);
    a typo fixed in it in the same save keeps the right answer and learners' memory."""
    from django.test import Client

    from practice.models import Memory
    from tests.practice.helpers import answer

    answer(Client(), seed, right=True)
    question = seed.questions.get(position=1)
    right_id = next(iter(question.correct_ids))
    right = next(n for n, c in enumerate(question.choices) if c["correct"])
    target = 1 if right == 0 else right - 1
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/lessons/question/{question.pk}/change/")
    letter = "ABCDEF"[right]
    direction = "down" if target > right else "up"
    page.get_by_role("button", name=f"Move choice {letter} {direction}").click()
    text = page.locator(f"input[name=choice_{target}_text]")
    text.fill(text.input_value() + " (typo fixed)")
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    question.refresh_from_db()
    assert question.choices[target]["id"] == right_id and question.correct_ids == {right_id}
    assert question.choices[target]["text"].endswith("(typo fixed)")
    assert Memory.objects.filter(question=question).count() == 1


def test_added_flashcards_come_numbered_after_the_others(page, live_server, seed, console_errors):
    log_in(page, live_server.url)
    stored = seed.flashcards.count()
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    add = page.locator("#flashcards-group").get_by_text("Add another Flashcard")
    for n in range(2):
        add.click()
        row = f"#id_flashcards-{stored + n}"
        expect(page.locator(f"{row}-position")).to_have_value(str(stored + n + 1))
        page.fill(f"{row}-front", f"New card {n + 1}")
        page.fill(f"{row}-back", "Its back")
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    cards = list(seed.flashcards.values_list("position", "front"))
    assert cards[-2:] == [(stored + 1, "New card 1"), (stored + 2, "New card 2")]
    assert not console_errors, console_errors


def test_the_question_list_filters_by_a_lesson_typed_into_its_box(
    page, live_server, seed, console_errors
):
    log_in(page, live_server.url)
    page.goto(live_server.url + "/admin/lessons/question/")
    page.locator(".lesson-filter .select2-selection").click()
    page.locator(".select2-search__field").fill("Message")
    page.get_by_role("option", name="Message Passing and Asynchronous Work").click()
    page.locator(".lesson-filter").get_by_role("button", name="Show").click()
    expect(page.locator("#result_list tbody tr")).to_have_count(8)
    expect(page.locator("#result_list")).not_to_contain_text(seed.title)
    assert not console_errors, console_errors


def test_save_as_a_new_draft_opens_the_copy(page, live_server, seed, console_errors):
    log_in(page, live_server.url)
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    page.fill("#id_title", "A copy to rework")
    page.locator(".submit-row").last.get_by_role("button", name="Save as a new draft").click()
    expect(page.locator(".messagelist")).to_contain_text("This is a new draft")
    copy = Lesson.objects.get(title="A copy to rework")
    assert page.url.endswith(f"/admin/lessons/lesson/{copy.pk}/change/")
    expect(page.locator("#id_status")).to_have_value("draft")
    assert Lesson.objects.get(pk=seed.pk).title == seed.title
    assert not console_errors, console_errors
