"""A lesson's history and the report triage in a real browser: under the CSP, keyboard-usable,
and without WCAG violations in light and dark mode."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from playwright.sync_api import expect

from lessons.models import LessonRevision, ProblemReport
from tests.browser.pages import WCAG_TAGS
from tests.browser.test_accessibility import describe

PASSWORD = "a long admin password"


def log_in(page, base: str) -> list[str]:
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(base + "/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    return problems


def test_an_editor_retitles_a_lesson_compares_and_restores_it(page, live_server, seed):
    problems = log_in(page, live_server.url)
    title = seed.title
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    page.fill("#id_title", "Many Devices, One Model")
    page.locator("input[name=_continue]").first.click()
    page.get_by_role("link", name="History").first.click()
    expect(page.get_by_role("heading", name="Revisions")).to_be_visible()
    page.get_by_role("link", name="Changes in revision 2").click()
    expect(page.locator(".diff-add", has_text="Many Devices, One Model")).to_be_visible()
    page.get_by_role("link", name="Back to the history").click()
    page.get_by_role("link", name="Restore revision 1").click()
    expect(page.locator(".diff-add", has_text=title)).to_be_visible()
    page.get_by_role("button", name="Restore this revision").click()
    expect(page.locator(".messagelist")).to_contain_text("Restored the revision of")
    seed.refresh_from_db()
    assert seed.title == title
    assert seed.revisions.first().source == LessonRevision.Source.RESTORE
    assert not problems, problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_history_and_triage_pages_have_no_wcag_violations(browser, live_server, seed, scheme):
    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    problems = log_in(page, live_server.url)
    page.goto(live_server.url + f"/admin/lessons/lesson/{seed.pk}/change/")
    page.fill("#id_title", "Many Devices, One Model")
    page.locator("input[name=_continue]").first.click()
    ProblemReport.objects.create(lesson=seed, kind="typo", message="Stage is misspelt.")
    newer, older = seed.revisions.all()
    base = f"/admin/lessons/lesson/{seed.pk}"
    for path in (
        "/admin/",
        "/admin/lessons/problemreport/",
        f"/admin/lessons/problemreport/{ProblemReport.objects.get().pk}/change/",
        f"{base}/history/",
        f"{base}/revisions/{newer.pk}/",
        f"{base}/revisions/{older.pk}/restore/",
        "/admin/lessons/lesson/?id__gt=1",  # refused, with why
    ):
        page.goto(live_server.url + path)
        axe = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_TAGS}})
        violations = axe.response["violations"]
        assert not violations, f"{path}: {describe(violations)}"
    context.close()
    refused = "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    assert problems == [refused], problems  # the one page that is a 400 on purpose
