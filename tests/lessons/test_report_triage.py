"""Triage of problem reports in the admin: open ones first with the message first, an assignee,
a resolution note, reopening, the number of new reports on the admin home, bulk changes logged."""

from __future__ import annotations

from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.test import Client

from lessons.models import ProblemReport

LIST = "/admin/lessons/problemreport/"


def report(lesson, message: str, status: str = "new") -> ProblemReport:
    return ProblemReport.objects.create(lesson=lesson, kind="typo", message=message, status=status)


def shown(html: str, messages: list[str]) -> list[str]:
    return [message for message in messages if message in html]


def test_the_list_opens_on_open_reports_with_the_message_first(editor_client, demo):  # noqa: F811
    texts = {status: f"Report that is {status}" for status in ProblemReport.Status.values}
    for status, text in texts.items():
        report(demo, text, status)
    html = editor_client.get(LIST).content.decode()
    assert shown(html, list(texts.values())) == [texts["new"], texts["accepted"]]
    assert 'class="field-short_message"><a href=' in html  # the message opens the report
    assert html.index("column-short_message") < html.index("column-status")
    everything = editor_client.get(LIST, {"state": "all"}).content.decode()
    assert shown(everything, list(texts.values())) == list(texts.values())
    fixed = editor_client.get(LIST, {"state": "fixed"}).content.decode()
    assert shown(fixed, list(texts.values())) == [texts["fixed"]]
    nonsense = editor_client.get(LIST, {"state": "<b>"})
    assert nonsense.status_code == 200 and not shown(
        nonsense.content.decode(), list(texts.values())
    )


def test_a_report_is_assigned_resolved_with_a_note_and_reopened(editor_client, editor, demo):  # noqa: F811
    item = report(demo, "Stage is misspelt.")
    outsider = User.objects.create_user("learner-account", password="x" * 12)
    url = f"{LIST}{item.pk}/change/"
    page = editor_client.get(url).content.decode()
    assert f'<option value="{editor.pk}">ada</option>' in page
    assert f'value="{outsider.pk}"' not in page  # only staff can be assigned
    data = {
        "status": "fixed",
        "assigned_to": str(editor.pk),
        "resolution_note": "Fixed the spelling in question 3.",
    }
    assert editor_client.post(url, data).status_code == 302
    item.refresh_from_db()
    assert (item.status, item.assigned_to, item.resolution_note) == (
        "fixed",
        editor,
        "Fixed the spelling in question 3.",
    )
    reopen = editor_client.get(url).content.decode()
    assert '<option value="accepted">Accepted</option>' in reopen
    assert '<option value="dismissed">' not in reopen  # reopened first, then dismissed
    assert editor_client.post(url, data | {"status": "accepted"}).status_code == 302
    item.refresh_from_db()
    assert item.status == "accepted"
    assert editor_client.post(url, data | {"status": "new"}).status_code == 200  # not a move
    item.refresh_from_db()
    assert item.status == "accepted"


def test_bulk_changes_are_logged_for_each_report(editor_client, editor, demo):  # noqa: F811
    first, second, third = (report(demo, f"Report {n}") for n in range(3))
    third.status = "dismissed"
    third.save()

    def act(action: str, *reports: ProblemReport) -> str:
        selected = [r.pk for r in reports]
        data = {"action": action, "_selected_action": selected}
        response = editor_client.post(LIST + "?state=all", data)
        assert response.status_code == 302
        return editor_client.get(response["Location"]).content.decode()

    assert "2 reports assigned to you." in act("assign_to_me", first, second)
    said = act("mark_fixed", first, second, third)
    assert "2 reports marked fixed." in said and "1 report left as it was: " in said
    act("reopen", first, third)
    statuses = dict(ProblemReport.objects.values_list("pk", "status"))
    assert statuses == {first.pk: "accepted", second.pk: "fixed", third.pk: "accepted"}
    assert set(ProblemReport.objects.values_list("assigned_to", flat=True)) == {editor.pk, None}

    def log(item: ProblemReport) -> list[str]:
        entries = LogEntry.objects.filter(object_id=str(item.pk), user=editor)
        return list(entries.order_by("pk").values_list("change_message", flat=True))

    assert log(first) == [
        "Assigned to ada (bulk action).",
        "Marked fixed with others (bulk action).",
        "Marked accepted with others (bulk action).",
    ]
    assert log(third) == ["Marked accepted with others (bulk action)."]  # was not "fixed"
    history = editor_client.get(f"{LIST}{first.pk}/history/").content.decode()
    assert "Marked fixed with others (bulk action)." in history


def test_the_admin_home_says_how_many_reports_are_new(editor_client, demo):  # noqa: F811
    home = editor_client.get("/admin/").content.decode()
    assert "No new problem reports" in home
    report(demo, "One")
    report(demo, "Two")
    report(demo, "Three", "accepted")
    home = editor_client.get("/admin/").content.decode()
    assert f'<a href="{LIST}?state=new">2 new problem reports</a>' in home


def test_the_home_count_is_only_for_those_who_may_read_reports(demo):
    report(demo, "One")
    staff = User.objects.create_user("helper", password="x" * 12, is_staff=True)
    client = Client()
    client.force_login(staff)
    assert "new problem report" not in client.get("/admin/").content.decode()
