"""Cached pages: they hold nothing of a learner's, and every kind of content edit shows at once.

Each edit is read back from a page that is served from the cache (the lesson page, the home
page, a subject page), so a missing invalidation makes its case fail.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from lessons.models import Flashcard, Lesson
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer, counter_text


def test_a_cached_page_holds_no_learner_data(demo):
    learner = Client()
    answer(learner, demo, right=True)
    assert counter_text(learner.get(SEED_PATH).content.decode()) == "Your sky: 1 kindled"
    visitor = Client().get(SEED_PATH).content.decode()
    assert counter_text(visitor) == "Your sky"
    assert 'name="csrfmiddlewaretoken"' not in visitor


def star_count(lesson: Lesson) -> str:
    return f"of {lesson.questions.count() + lesson.flashcards.count()} stars"


@pytest.mark.parametrize("edit", ["question", "flashcard", "subject", "area", "link", "delete"])
def test_every_kind_of_edit_shows_on_the_next_request(client, demo, edit):
    # The lesson page for every edit but a question's prompt, which only its Markdown twin shows.
    page = SEED_PATH + ".md" if edit == "question" else SEED_PATH
    before = client.get(page).content.decode()  # now in the cache
    if edit == "question":
        question = demo.questions.get(position=1)
        question.prompt = "A brand new prompt?"
        question.save()
        expected = "A brand new prompt?"
    elif edit == "flashcard":
        # The lesson page's constellation counts the lesson's flashcards as stars.
        Flashcard.objects.create(lesson=demo, key="new-card", front="Front", back="Back")
        expected = star_count(demo)
    elif edit == "subject":
        demo.subject.name = "Computing Science"
        demo.subject.save()
        expected = "Computing Science"
    elif edit == "area":
        demo.area.name = "Ideas Worth Keeping"
        demo.area.save()
        expected = "Ideas Worth Keeping"
    elif edit == "link":
        demo.needs_first.clear()
        expected = "Nothing; this is a starting point."
    else:
        Lesson.objects.get(public_id="mt_Nv1-WLGIO4").delete()
        expected = "Nothing yet; more lessons are on their way."
    assert expected not in before
    assert expected in client.get(page).content.decode()


@pytest.mark.parametrize("query", ["?mode=agent&", "?%6Dode=agent", "?mode=x&mode=agent", "?a=1"])
def test_only_a_plain_address_is_kept_so_nobody_can_fill_the_cache_with_copies(demo, query):
    """Read on /sky, whose page is rendered from its templates whenever it is not kept; the
    rule is the same for every kept page."""
    for plain in ("/sky", "/sky?mode=agent"):
        Client().get(plain)
        assert not Client().get(plain).templates  # kept
    for _ in range(2):
        assert Client().get("/sky" + query).templates  # rendered each time, never kept


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def visit(path: str, kind: str) -> str:
    """A visitor with no session asks for `path` as a browser (html) or an agent (markdown)
    does, and checks it got that kind; returns the body."""
    accept = BROWSER_ACCEPT if kind == "html" else "text/markdown"
    response = Client().get(path, headers={"Accept": accept})
    assert response.status_code == 200
    body = response.content.decode()
    if kind == "html":
        assert response["Content-Type"] == "text/html; charset=utf-8"
        assert body.lstrip().lower().startswith("<!doctype html>")
    else:
        assert response["Content-Type"] == "text/markdown; charset=utf-8", body[:200]
        assert body.startswith("---\ntitle: ") and "<html" not in body
    return body


@pytest.mark.parametrize("first, then", [("html", "markdown"), ("markdown", "html")])
@pytest.mark.parametrize("path", ["/", SEED_PATH], ids=["home", "lesson"])
def test_a_kept_page_is_kept_apart_for_browsers_and_agents(demo, path, first, then):
    """After a browser's visit an agent asking for Markdown still gets Markdown, and after an
    agent's a browser still gets HTML, each time, from the kept pages."""
    kept = {kind: visit(path, kind) for kind in (first, then)}
    for kind in (first, then):
        assert visit(path, kind) == kept[kind]


def test_the_kept_sky_of_a_new_browser_is_kept_for_its_day_only(demo):
    """/sky counts its forecast's days from today: a page kept before midnight is not served
    after it."""
    evening = timezone.now().replace(hour=23, minute=0)
    tomorrow, day_after = evening + timedelta(days=1), evening + timedelta(days=2)
    with time_machine.travel(evening, tick=False):
        Client().get("/sky")
        assert f"<td>{tomorrow:%a %-d %b}</td>" in Client().get("/sky").content.decode()
    with time_machine.travel(evening + timedelta(hours=2), tick=False):
        kept_after_midnight = Client().get("/sky").content.decode()
    assert f"<td>{tomorrow:%a %-d %b}</td>" not in kept_after_midnight  # it is today now
    assert f"<td>{day_after:%a %-d %b}</td>" in kept_after_midnight


def test_each_page_is_kept_under_its_own_address(demo):
    other = Lesson.objects.exclude(pk=demo.pk).first()
    pages = {SEED_PATH: demo.title, other.get_absolute_url(): other.title}
    for path in pages:
        Client().get(path)
    for path, title in pages.items():
        assert f'<h1 id="lesson-title">{title}</h1>' in Client().get(path).content.decode()
