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


def test_changing_a_remembered_answer_asks_first_and_cancel_goes_back(page, live_server, seed):
    from django.test import Client

    from practice.models import Memory
    from tests.practice.helpers import answer

    answer(Client(), seed, right=True)  # one learner remembers question 1
    question = seed.questions.get(position=1)
    User.objects.create_superuser("root", "root@example.org", "a long admin password")
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "a long admin password")
    page.click("input[type=submit]")
    page.goto(live_server.url + f"/admin/lessons/question/{question.pk}/change/")
    right = "ABCDEF".index(question.correct_letters[0])
    other = next(i for i, c in enumerate(question.choices) if not c["correct"])
    page.uncheck(f"#id_choice_{right}_correct")
    # a published lesson needs a "why wrong" for the choice that is wrong now: its box shows
    page.fill(f"#id_choice_{right}_why", "It is not the answer any more.")
    page.check(f"#id_choice_{other}_correct")
    expect(page.locator(f"#id_choice_{other}_why")).to_be_hidden()
    page.click("input[name=_save]")
    expect(page.get_by_role("heading", name="learners remember")).to_be_visible()
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator(f"#id_choice_{other}_correct")).to_be_visible()  # back on the form
    assert Memory.objects.filter(question=question).count() == 1
    page.check(f"#id_choice_{other}_correct")
    page.uncheck(f"#id_choice_{right}_correct")
    page.fill(f"#id_choice_{right}_why", "It is not the answer any more.")
    page.click("input[name=_save]")
    page.get_by_role("button", name="Reset their memory and save").click()
    expect(page.locator(".messagelist")).to_contain_text("memory of it was reset")
    assert Memory.objects.filter(question=question).count() == 0
    assert not problems, problems
