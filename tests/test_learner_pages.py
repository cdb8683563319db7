"""A learner's pages: each shows this learner's own stars, counter and round around content
that is the same for everyone, and an edit shows on the next request (tests/test_budgets.py
pins what they read)."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lessons.models import Lesson
from practice.models import Learner, Review
from tests.conftest import SEED_PATH
from tests.factories import make_lesson, make_question
from tests.practice.helpers import (
    CSRF_FIELD,
    TOKEN_FIELD,
    answer,
    counter_text,
    csrf_field,
    current_question,
    exported,
    finish_round,
    form_token,
    practice_url,
    right_choices,
)
from tests.test_budgets import learner_with


def test_forget_ends_the_session_in_every_tab_and_on_every_server(client, demo):
    answer(client, demo, right=True)
    other_tab = Client()  # the same browser, served by another process or server
    other_tab.cookies[settings.SESSION_COOKIE_NAME] = client.cookies[
        settings.SESSION_COOKIE_NAME
    ].value
    assert counter_text(other_tab.get(SEED_PATH).content.decode()) == "Your sky: 1 kindled"

    client.post("/progress/forget", {"confirm": "yes"})

    assert Session.objects.count() == 0 and Learner.objects.count() == 0
    assert counter_text(other_tab.get(SEED_PATH).content.decode()) == "Your sky"
    assert "Nothing yet: your first right answer" in other_tab.get("/progress").content.decode()


def test_a_tab_that_has_not_seen_forget_yet_records_nothing_and_starts_no_learner(client, demo):
    # Its requests still carry the ended session's cookie: an answer or an import sent from it
    # after "Forget everything" must not start a new learner for the browser that asked.
    answer(client, demo, right=True)
    saved = json.dumps(exported(client)).encode()
    question, token = current_question(client, practice_url(demo) + "?new=1")
    session = client.cookies[settings.SESSION_COOKIE_NAME].value

    client.post("/progress/forget", {"confirm": "yes"})

    other_tab = Client()
    other_tab.cookies[settings.SESSION_COOKIE_NAME] = session
    answered = other_tab.post(
        practice_url(demo), {"token": token, "choice": right_choices(question)}
    )
    assert answered.status_code == 409
    # The ended session's cookie is cleared, so the tab's next request starts afresh.
    assert other_tab.cookies[settings.SESSION_COOKIE_NAME].value == ""
    other_tab.cookies[settings.SESSION_COOKIE_NAME] = session  # a third tab, sent at once
    imported = other_tab.post("/progress/import", {"file": SimpleUploadedFile("p.json", saved)})
    assert imported.status_code == 409
    assert "just erased, in another tab or window" in imported.content.decode()
    assert not Learner.objects.exists() and not Review.objects.exists()


def test_an_editors_change_shows_on_a_learners_next_lesson_page(client, demo):
    answer(client, demo, right=True)
    assert "Split the work" in client.get(SEED_PATH).content.decode()  # the page's frame, kept
    demo.heading = "A freshly edited heading"
    demo.save()
    html = client.get(SEED_PATH).content.decode()
    assert "A freshly edited heading" in html and "Split the work" not in html
    assert counter_text(html) == "Your sky: 1 kindled"  # still this learner's page


def test_a_learners_constellation_sits_in_the_shared_page(client, demo):
    answer(client, demo, right=True)
    html = client.get(SEED_PATH).content.decode()
    practise = html[html.index('id="practise-title"') : html.index('class="report-link"')]
    assert f'id="constellation-{demo.public_id}"' in practise
    assert "1 kindled" in practise


def test_a_learners_practice_and_review_pages_show_an_edit_and_their_own_parts(client, demo):
    """An edit shows on the next request, around this learner's own card, progress and
    counter."""
    answer(client, demo, right=True)
    other = Client()
    assert "Question 1 of" in other.get(practice_url(demo)).content.decode()
    html = client.get(practice_url(demo)).content.decode()
    assert "Question 2 of" in html and "1 of 8 answered" in html
    demo.title = "A freshly edited title"
    demo.save()
    for path in (practice_url(demo), "/review"):
        html = client.get(path).content.decode()
        assert counter_text(html).startswith("Your sky: "), path
    html = client.get(practice_url(demo)).content.decode()
    assert "A freshly edited title" in html and "Question 2 of" in html
    assert "Question 1 of" in other.get(practice_url(demo)).content.decode()


def test_the_header_counter_is_the_same_on_every_page(demo):
    """Read with the lesson's memories, the items due, or on its own: the same figures, also
    on a lesson the learner has not started."""
    client = Client()
    learner_with(client, demo, 40)
    not_started = make_lesson(title="Not started", slug="not-started")
    later = time_machine.travel(timezone.now() + timedelta(days=2), tick=False)
    with later:
        expected = counter_text(client.get("/sky").content.decode())
        assert re.fullmatch(r"Your sky: [1-9]\d* kindled · [1-9]\d* due", expected), expected
        for path in (
            SEED_PATH,
            practice_url(demo),
            not_started.get_absolute_url(),
            practice_url(not_started),
            "/review",
        ):
            assert counter_text(client.get(path).content.decode()) == expected, path


def test_two_browsers_shown_the_same_question_each_get_their_own_form(demo):
    """Each browser's page carries its own answer token and CSRF token around the same
    question, and each answer counts as its own."""
    demo.questions.update(keep_choice_order=True)  # the same order, so the same form otherwise
    browsers = [Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)]
    responses = [browser.get(practice_url(demo)) for browser in browsers]
    pages = [response.content.decode() for response in responses]
    tokens = [form_token(response) for response in responses]
    csrf_tokens = [csrf_field(response) for response in responses]
    assert tokens[0] != tokens[1] and csrf_tokens[0] != csrf_tokens[1]

    def form(page: str) -> str:
        html = page[page.index('<form method="post"') : page.index("</form>")]
        return CSRF_FIELD.sub("", TOKEN_FIELD.sub("", html))

    assert form(pages[0]) == form(pages[1])
    question = demo.questions.order_by("position").first()
    for browser, answer_token, csrf_token in zip(browsers, tokens, csrf_tokens, strict=True):
        response = browser.post(
            practice_url(demo),
            {
                "token": answer_token,
                "choice": right_choices(question),
                "csrfmiddlewaretoken": csrf_token,
            },
        )
        assert response.status_code == 302
        assert counter_text(browser.get(SEED_PATH).content.decode()).startswith(
            "Your sky: 1 kindled"
        )
    assert Learner.objects.count() == 2


def constellation_figure(client: Client, lesson: Lesson) -> str:
    """The lesson's constellation as its lesson page shows this browser."""
    html = client.get(lesson.get_absolute_url()).content.decode()
    figure = html[html.index(f'<figure id="constellation-{lesson.public_id}"') :]
    return figure[: figure.index("</figure>")]


def test_a_constellation_is_redrawn_when_a_star_changes_and_its_counts_do_not(client, demo):
    """A star's words change as its review comes nearer while the counts under the drawing
    stay the same."""
    answer(client, demo, right=True)

    def constellation_at(later: timedelta) -> tuple[str, str]:
        with time_machine.travel(timezone.now() + later, tick=False):
            figure = constellation_figure(client, demo)
        star = re.search(r"<title>Question 1 of [^<]*: (kindled[^<]*)</title>", figure)
        caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, re.S)
        assert star and caption, figure
        return star[1], caption[1]

    today = constellation_at(timedelta(hours=1))
    tomorrow = constellation_at(timedelta(days=1, hours=1))
    assert today[1] == tomorrow[1] and "1 kindled" in today[1]
    assert today[0] == "kindled: next review in 2 days"
    assert tomorrow[0] == "kindled: next review in 23 hours"


def test_a_lesson_not_started_is_drawn_alike_for_every_learner_until_their_first_answer(demo):
    """A lesson a learner has not answered in looks the same to every learner, at every
    moment: one learner's first answer changes their drawing alone, and an edit (a title, a
    question more) shows in everyone's."""
    other_lesson = make_lesson(slug="other-lesson", title="Another Lesson")
    first, second = Client(), Client()
    for client in (first, second):  # learners, with sessions, who have not started the demo
        assert answer(client, other_lesson, right=True).status_code == 302

    def stars(client: Client) -> tuple[str, list[str]]:
        figure = constellation_figure(client, demo)
        caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, re.S)
        assert caption, figure
        return caption[1], re.findall(r"<title>(Question \d+ of [^<]*)</title>", figure)

    caption, titles = stars(first)
    assert constellation_figure(second, demo) == constellation_figure(first, demo)
    assert "0 kindled" in caption and "16 unlit" in caption and len(titles) == 8
    assert titles[0] == f"Question 1 of {demo.title}: unlit, not answered yet"

    assert answer(first, demo, right=True).status_code == 302
    assert "1 kindled" in stars(first)[0]
    assert stars(second) == (caption, titles)  # the drawing they shared is unchanged

    demo.title = "A freshly edited title"
    demo.save()
    assert stars(second)[1][0] == "Question 1 of A freshly edited title: unlit, not answered yet"
    make_question(demo, position=9)
    assert len(stars(second)[1]) == 9


def without_tokens(html: str) -> str:
    """A page without its hidden fields' values, which change on every showing (the CSRF
    token is masked afresh; the attempt token is signed with the time)."""
    return re.sub(r'(<input type="hidden" name="[^"]+" value=")[^"]*"', r'\1"', html)


def shown(client: Client, demo, page: str) -> str:
    """A learner's lesson page, practice page or /review (a month on, with items due), without
    the hidden fields' values."""
    path = {"lesson": SEED_PATH, "practice": practice_url(demo), "review": "/review"}[page]
    later = timedelta(days=30 if page == "review" else 0)
    with time_machine.travel(timezone.now() + later, tick=False):
        return without_tokens(client.get(path).content.decode())


LEARNER_PAGES = ["lesson", "practice", "review"]


@pytest.mark.parametrize("which", LEARNER_PAGES)
@time_machine.travel("2026-12-03 10:00Z", tick=False)
def test_a_page_shows_only_the_rows_of_the_learner_its_session_names(demo, which):
    mine, theirs = Client(), Client()
    for right in (True, True, True):
        answer(mine, demo, right=right)
    answer(theirs, demo, right=False)
    html = shown(mine, demo, which)
    assert counter_text(html) != counter_text(shown(theirs, demo, which))
    assert shown(mine, demo, which) == html


def test_a_learner_who_signs_in_as_an_editor_keeps_their_sky(client, demo, django_user_model):
    # Signing in gives the session a new key (a new row, the learner's data copied over).
    answer(client, demo, right=True)
    old_key = client.cookies[settings.SESSION_COOKIE_NAME].value
    client.force_login(django_user_model.objects.create_user("editor", is_staff=True))
    assert client.cookies[settings.SESSION_COOKIE_NAME].value != old_key
    assert counter_text(client.get(SEED_PATH).content.decode()).startswith("Your sky: 1 kindled")


def test_a_session_without_a_learner_is_not_written_by_reading_pages(
    client, demo, django_user_model
):
    client.force_login(django_user_model.objects.create_user("editor", is_staff=True))
    for path in (SEED_PATH, practice_url(demo), "/review", "/sky"):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        writes = [q["sql"] for q in captured if q["sql"].split()[0] in ("INSERT", "UPDATE")]
        assert writes == [], path


def test_no_learner_page_speaks_the_schedulers_language(client, demo):
    """The words of the model behind the sky stay behind it: learners read of stars, not of a
    scheduler, memory states or states taken."""
    finish_round(client, demo, [False] + [True] * 7 + [True])
    practice = practice_url(demo)
    pages = [
        "/", demo.get_absolute_url(), practice + "?summary=1", practice + "?missed=1",
        practice + "?missed=1&n=2", "/review", "/sky", "/sky/table", "/sky/words", "/progress",
        demo.get_absolute_url() + "/flashcards", demo.get_absolute_url() + "/worksheet",
        demo.get_absolute_url() + "/worksheet/answers",
    ]  # fmt: skip
    upload = SimpleUploadedFile("p.json", json.dumps(exported(client)).encode())
    shown = [client.get(path).content.decode() for path in pages]
    shown.append(client.post("/progress/import", {"file": upload}, follow=True).content.decode())
    for path, html in zip([*pages, "import"], shown, strict=True):
        text = re.sub(r"<[^>]+>", " ", html[html.find("<main") :]).lower()
        for words in ("scheduler", "memory state", "states taken"):
            assert words not in text, (path, words)
