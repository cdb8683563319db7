"""Cached pages: they hold nothing of a learner's, and every kind of content edit shows at once.

Each edit is read back from a page that is served from the cache (the lesson page, the home
page, a subject page), so a missing invalidation makes its case fail.
"""

from __future__ import annotations

import pytest
from django.test import Client

from lessons.models import Flashcard, Lesson
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer


def test_a_cached_page_holds_no_learner_data(demo):
    learner = Client()
    answer(learner, demo, right=True)
    assert "1 learned so far" in learner.get(SEED_PATH).content.decode()
    visitor = Client().get(SEED_PATH).content.decode()
    assert "1 learned so far" not in visitor and "Your sky" in visitor
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


@pytest.mark.parametrize("entries, rebuilt", [(2, True), (5000, False)])
def test_page_cache_entries_is_how_many_lesson_pages_a_process_keeps(demo, entries, rebuilt):
    """PAGE_CACHE_ENTRIES bounds the lesson data and page frames each process keeps in memory
    (a lesson page takes two): too few for the lessons read, and each read builds its lesson's
    again (four more queries)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, override_settings

    learner = Client()
    answer(learner, demo, right=True)  # a learner's page reads its lesson from memory
    others = [lesson.get_absolute_url() for lesson in Lesson.objects.exclude(pk=demo.pk)]
    with override_settings(PAGE_CACHE_ENTRIES=entries):
        learner.get(SEED_PATH)
        with CaptureQueriesContext(connection) as steady:
            learner.get(SEED_PATH)
        for path in others:
            learner.get(path)
        with CaptureQueriesContext(connection) as again:
            learner.get(SEED_PATH)
    assert (len(again) > len(steady)) is rebuilt


@pytest.mark.parametrize("query", ["?mode=agent&", "?%6Dode=agent", "?mode=x&mode=agent", "?a=1"])
def test_only_a_plain_address_is_kept_so_nobody_can_fill_the_cache_with_copies(demo, query):
    """Read on /sky, whose page is rendered from its templates whenever it is not kept (a
    lesson page's parts are kept apart anyway); the rule is the same for every kept page."""
    for plain in ("/sky", "/sky?mode=agent"):
        Client().get(plain)
        assert not Client().get(plain).templates  # kept
    for _ in range(2):
        assert Client().get("/sky" + query).templates  # rendered each time, never kept
