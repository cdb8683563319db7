from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lessons.models import ProblemReport
from practice.models import Review
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer

REPORT = SEED_PATH + "/report"


def test_every_lesson_page_links_to_its_report_form(client, demo):
    html = client.get(SEED_PATH).content.decode()
    assert f'<a href="{REPORT}">Spotted a problem on this page? Tell us</a>' in html


def test_a_report_is_stored_with_the_lesson_and_question(client, demo):
    form = client.get(REPORT)
    assert form.status_code == 200
    response = client.post(
        REPORT, {"kind": "typo", "question": "3", "message": "Stage is misspelt."}
    )
    assert response.status_code == 302
    assert response["Location"] == REPORT + "?sent=1"
    report = ProblemReport.objects.get()
    assert (report.lesson, report.question.position, report.kind, report.status) == (
        demo,
        3,
        "typo",
        "new",
    )
    assert "Thank you" in client.get(response["Location"]).content.decode()


def test_a_report_about_the_whole_lesson_names_no_question(client, demo):
    client.post(REPORT, {"kind": "unclear", "question": "", "message": "The recap is confusing."})
    assert ProblemReport.objects.get().question is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "", "message": "Something is off here."}, "Choose what kind of problem it is."),
        ({"kind": "typo", "message": ""}, "Tell us what is wrong"),
        ({"kind": "typo", "message": "abc"}, "at least 5 characters"),
        ({"kind": "praise", "message": "Lovely lesson!"}, "Select a valid choice"),
        ({"kind": "typo", "question": "9", "message": "Question nine?"}, "not part of this lesson"),
        ({"kind": "typo", "message": "x" * 2001}, "under 2000 characters"),
    ],
)
def test_bad_reports_are_refused_clearly_and_store_nothing(client, demo, data, message):
    response = client.post(REPORT, data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not ProblemReport.objects.exists()


def test_a_flood_of_reports_gets_429_with_retry_after(window_start, client, demo, settings):
    from lightmysky.ratelimit import Limit

    settings.RATE_LIMITS = settings.RATE_LIMITS | {"report": Limit(3, 30, 600)}
    data = {"kind": "typo", "message": "Another typo here."}
    statuses = [client.post(REPORT, data).status_code for _ in range(5)]
    assert statuses == [302, 302, 302, 429, 429]
    response = client.post(REPORT, data)
    assert int(response["Retry-After"]) > 0
    assert "try again in" in response.content.decode()
    assert ProblemReport.objects.count() == 3


def test_the_report_form_works_without_javascript(client, demo):
    html = client.get(REPORT).content.decode()
    assert f'<form method="post" action="{REPORT}"' in html
    main = html[html.index('<main id="main"') : html.index("</main>")]
    assert "data-hx-" not in main  # only the header's search box takes htmx on this page


def test_editors_triage_reports_new_accepted_fixed(demo):
    Client().post(REPORT, {"kind": "wrong_fact", "message": "Bandwidth is per second."})
    Client().post(REPORT, {"kind": "other", "message": "Please add a diagram."})
    editor = Client()
    editor.force_login(User.objects.create_superuser("ed", password="x" * 12))
    listing = editor.get("/admin/lessons/problemreport/", {"state": "new"})
    assert listing.content.decode().count('name="_selected_action"') == 2
    first, second = ProblemReport.objects.order_by("pk")
    editor.post(
        "/admin/lessons/problemreport/", {"action": "mark_accepted", "_selected_action": [first.pk]}
    )
    editor.post(
        "/admin/lessons/problemreport/",
        {"action": "mark_fixed", "_selected_action": [first.pk, second.pk]},
    )
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == ("fixed", "fixed")  # a new one may be fixed at once
    editor.post(
        "/admin/lessons/problemreport/",
        {"action": "mark_dismissed", "_selected_action": [second.pk]},
    )
    second.refresh_from_db()
    assert second.status == "fixed"  # fixed is not dismissed: it is reopened first
    change = editor.get(f"/admin/lessons/problemreport/{first.pk}/change/").content.decode()
    assert f'href="/admin/lessons/lesson/{demo.pk}/change/"' in change


def test_the_answers_feedback_reports_the_question_just_answered_with_what_was_chosen(client, demo):
    """The editors' review, M6: the feedback is where a learner disagrees with the key, so its
    report link names that question, not the next one, and starts with what they chose."""
    feedback = client.get(answer(client, demo, right=False)["Location"]).content.decode()
    review = Review.objects.get()
    link = re.search(r'<a href="([^"]+)">Disagree, or spotted a problem\? Report this', feedback)
    assert link, feedback
    url = html.unescape(link[1])
    assert url == REPORT + f"?question={review.question.position}&chose={review.answer}"
    form = html.unescape(client.get(url).content.decode())
    chosen = next(c["text"] for c in review.question.choices if c["id"] == review.answer)
    assert f"I answered “{chosen}”. </textarea>" in form
    assert f'<option value="{review.question.position}" selected>' in form
    message = f"I answered “{chosen}”. I think the key is wrong."
    client.post(
        REPORT,
        {"kind": "wrong_fact", "question": str(review.question.position), "message": message},
    )
    assert ProblemReport.objects.get().question == review.question


def test_the_report_form_names_each_question_as_it_reads(client, demo):
    """The editors' walk of 2026-12-06: the drop-down showed a prompt's Markdown marks."""
    demo.questions.filter(position=2).update(prompt="Which stage waits **longest**, and `why`?")
    page = client.get(REPORT).content.decode()
    assert '<option value="2">Question 2: Which stage waits longest, and why?</option>' in page
