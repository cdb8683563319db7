"""The editors' admin works under the site's strict Content Security Policy."""

from __future__ import annotations

from django.contrib.auth.models import User
from playwright.sync_api import expect


def test_admin_pages_work_without_console_errors(page, live_server, seed):
    User.objects.create_superuser("root", "root@example.org", "a long admin password")
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "a long admin password")
    page.click("input[type=submit]")
    for path in (
        "/admin/",
        "/admin/lessons/lesson/",
        "/admin/lessons/lesson/add/",
        "/admin/lessons/question/",
        "/admin/lessons/problemreport/",
    ):
        page.goto(live_server.url + path)
    page.goto(live_server.url + "/admin/lessons/lesson/")
    page.get_by_role("link", name=seed.title).click()
    # The autocomplete pickers are scripts: they must run under the policy.
    expect(page.locator(".select2-container").first).to_be_visible()
    assert not problems, problems
