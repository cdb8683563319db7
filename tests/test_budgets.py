"""Budgets that do not depend on the machine: SQL queries per page and bytes per first load.

Each is measured for a learner with one reviewed item and with 500, and must be the same.
Speed is measured by `make bench`, not here.
"""

from __future__ import annotations

import gzip
import re
from datetime import timedelta

import pytest
import time_machine
from django.contrib.staticfiles import finders
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lessons.models import Lesson
from practice.models import Learner, Memory, Review, Round
from tests.conftest import SEED_PATH
from tests.factories import make_lesson
from tests.practice.helpers import (
    LESSON_PAGE_QUERIES,
    PRACTICE_PAGE_QUERIES,
    QUESTION_PAGE_QUERIES,
    REVIEW_PAGE_QUERIES,
    answer,
    asked_question,
    current_question,
    finish_round,
    form_token,
    learn_everything_in,
    practice_url,
)

# An answer: the rate-limit counters' upsert, the session, the lesson's questions and the round
# with its answers; then one transaction that locks the learner and the item's memory and saves
# the review and the memory.
ANSWER_QUERIES = 8


def learner_with(client: Client, demo: Lesson, items: int) -> Learner:
    """A learner who answered one question in the browser, plus reviews of `items - 1` more."""
    answer(client, demo, right=True)
    learner = Learner.objects.get(public_id=client.session["learner"])
    if items > 1:
        lessons = [
            make_lesson(title=f"Extra {n}", slug=f"extra-{n}", flashcards=2) for n in range(50)
        ]
        now = timezone.now()
        memories, reviews = [], []
        for lesson in lessons:
            for question in lesson.questions.all():
                if len(memories) >= items - 1:
                    break
                fields = {"learner": learner, "lesson": lesson, "question": question}
                memories.append(
                    Memory(
                        **fields,
                        state=2,
                        stability=3.0,
                        difficulty=5.0,
                        due=now - timedelta(hours=1),
                        last_review=now - timedelta(days=3),
                        last_rating=3,
                    )
                )
                reviews.append(
                    Review(
                        **fields,
                        attempt=f"seed-{question.pk}",
                        rating=3,
                        reviewed_at=now - timedelta(days=3),
                        correct=True,
                        answer="A",
                    )
                )
        Memory.objects.bulk_create(memories)
        Review.objects.bulk_create(reviews)
    return learner


@pytest.fixture(params=[1, 500], ids=["1 item", "500 items"])
def learner_client(request, demo) -> Client:
    client = Client()
    learner_with(client, demo, request.param)
    client.get(SEED_PATH)  # warm the content caches, as any earlier visitor would have
    client.get("/sky")
    return client


def test_lesson_page_for_a_visitor_without_a_session_is_one_query_once_warm(
    client, demo, django_assert_num_queries
):
    client.get(SEED_PATH)
    with django_assert_num_queries(1):  # the content version; the page comes from the cache
        response = client.get(SEED_PATH)
    assert response.status_code == 200 and "Then practise" in response.content.decode()


def test_a_worksheets_short_address_is_one_query_once_warm(client, demo, django_assert_num_queries):
    address = f"/w/{demo.worksheet_code(list(demo.questions.all()))}"
    client.get(address)
    with django_assert_num_queries(1):  # the content version; the codes come from the cache
        assert client.get(address).status_code == 302


def test_an_edit_shows_on_the_very_next_request(client, demo):
    assert "Split the work" in client.get(SEED_PATH).content.decode()
    demo.heading = "A freshly edited heading"
    demo.save()
    assert "A freshly edited heading" in client.get(SEED_PATH).content.decode()


def test_a_lesson_met_first_by_its_practice_page_is_read_in_three_queries(client, demo):
    # After an edit each process builds every lesson's page data again, from whichever of the
    # lesson's pages it serves first. The practice page and the answer need the lesson, its
    # questions and its stars; the lesson's neighbours wait until the lesson page shows them.
    client.get(practice_url(demo))
    with CaptureQueriesContext(connection) as warm:
        client.get(practice_url(demo))
    demo.save()
    with CaptureQueriesContext(connection) as first:
        response = client.get(practice_url(demo))
    assert response.status_code == 200 and "Question 1 of 8" in response.content.decode()
    assert len(first) == len(warm) + 3
    assert not any("lessons_lesson_needs_first" in query["sql"] for query in first)

    with CaptureQueriesContext(connection) as lesson_page:
        html = client.get(SEED_PATH).content.decode()
    assert any("lessons_lesson_needs_first" in query["sql"] for query in lesson_page)
    learn_first = html[html.find("Learn first") : html.find("Optional connections")]
    opens_up = html[html.find("This opens up") : html.find('id="practise-title"')]
    assert "/learn/computing/message-passing-and-asynchronous-work-mt_twcpO-945r" in learn_first
    assert "/learn/computing/serving-a-model-batching-the-key-value-cache" in opens_up
    assert "8 questions wait behind this lesson" in html
    assert '<script type="application/ld+json">{' in html and '"LearningResource"' in html


def test_lesson_page_for_a_learner(learner_client, django_assert_num_queries):
    with django_assert_num_queries(LESSON_PAGE_QUERIES):
        assert learner_client.get(SEED_PATH).status_code == 200


def test_practice_step_get_and_post(
    learner_client, demo, assert_max_queries, django_assert_num_queries
):
    with django_assert_num_queries(QUESTION_PAGE_QUERIES):
        page = learner_client.get(practice_url(demo))
    question, token = asked_question(page), form_token(page)
    with assert_max_queries(ANSWER_QUERIES):
        response = learner_client.post(
            practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
        )
    assert response.status_code == 302


def test_a_rounds_first_answer_starts_it_with_the_answers_own_writes(
    learner_client, demo, assert_max_queries
):
    question, token = current_question(learner_client, practice_url(demo) + "?new=1")
    # as any answer (the round's answers read: none, the order it asks in comes in the signed
    # form), and the round written before its first answer, in the same transaction
    with assert_max_queries(ANSWER_QUERIES + 1):
        response = learner_client.post(
            practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
        )
    assert response.status_code == 302
    assert not Round.objects.filter(review__isnull=True).exists()  # no round without answers


def test_practice_step_with_htmx(learner_client, demo, assert_max_queries):
    question, token = current_question(learner_client, practice_url(demo))
    # as any answer, then for the stars shown with the feedback the content version (the key of
    # the lesson's cached page data), the lesson's memories and the header's counter
    with assert_max_queries(ANSWER_QUERIES + 3):
        response = learner_client.post(
            practice_url(demo),
            {"token": token, "choice": sorted(question.correct_ids)},
            headers={"HX-Request": "true"},
        )
    assert response.status_code == 200


def test_a_missed_question_practised_with_htmx(client, demo, django_assert_num_queries):
    finish_round(client, demo, [False] + [True] * 7 + [False])
    page = client.get(practice_url(demo) + "?missed=1")
    question = asked_question(page)
    # the rate limit's count, the session, the lesson's questions; the answer's transaction
    # (its two savepoint statements, the learner, the memory, the review); then the round's
    # answers (how many it missed, for "1 of 2 practised") and the showing before this one
    # (the verdict marks the choices in the order it asked them)
    with django_assert_num_queries(10):
        response = client.post(
            practice_url(demo),
            {"token": form_token(page), "choice": sorted(question.correct_ids), "n": 1},
            headers={"HX-Request": "true"},
        )
    assert "Missed question 1 of 1 practised." in response.content.decode()


def test_sky(learner_client, assert_max_queries):
    # session, content version, the learner's memories, the header's counter
    with assert_max_queries(4):
        assert learner_client.get("/sky").status_code == 200


def test_review(learner_client, django_assert_num_queries):
    later = time_machine.travel(timezone.now() + timedelta(days=10), tick=False)
    with later, django_assert_num_queries(REVIEW_PAGE_QUERIES):
        assert learner_client.get("/review").status_code == 200


def static_bytes(path: str) -> bytes:
    found = finders.find(path)
    assert found, path
    with open(found, "rb") as file:
        return file.read()


def test_lesson_page_first_load_is_small_and_few_requests(client, demo):
    html = client.get(SEED_PATH).content
    assets = re.findall(rb'(?:src|href)="/static/([^"]+)"', html)
    requests = 1 + len(assets)
    total = len(gzip.compress(html)) + sum(
        len(gzip.compress(static_bytes(asset.decode()))) for asset in assets
    )
    assert requests <= 4, assets
    assert total <= 50 * 1024, total


def queries_for_1_and_500_items(demo: Lesson, path: str) -> list[int]:
    """The page's queries, warm, for a learner with one reviewed item and for one with 500."""
    counts = []
    for items in (1, 500):
        client = Client()
        learner_with(client, demo, items)
        client.get(path)  # warm the content caches
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        counts.append(len(captured))
    return counts


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/learn/computing/",
        SEED_PATH + "/flashcards",
        SEED_PATH + "/worksheet",
        SEED_PATH + "/worksheet/answers",
        "/w",
        SEED_PATH + "/report",
        "/sky/table",
        "/progress",
        # session; matches counted; this page of them; their lessons; their states; the counter
        "/search?q=parallelism",
    ],
)
def test_other_learner_pages_have_a_fixed_query_count(demo, path):
    """Every other page a learner opens: at most 6 queries, the same with 1 item or 500."""
    counts = queries_for_1_and_500_items(demo, path)
    assert counts[0] == counts[1] <= 6, counts


@pytest.mark.parametrize(
    ("path", "queries"),
    [
        # session; lessons; the header's counter; lesson states; the latest lessons' items and
        # the learner's memories of them
        ("/", 6),
        # session; subject; how many lessons it has (for its pages of 50); this page's
        # lessons; their states; the header's counter
        ("/learn/computing/", 6),
        # session; lessons started and stars learned by week; what is stored (2); the counter
        ("/progress", 5),
    ],
)
def test_the_pages_that_show_a_learners_lessons_cost_the_same_for_1_or_500_items(
    demo, path, queries
):
    """Lesson states, the home page's sky and /progress's record cost the same for a learner
    with one memory as for one with 500 across 50 lessons (6 of them drawn on the home page)."""
    counts = queries_for_1_and_500_items(demo, path)
    assert counts == [queries, queries], counts


def test_a_new_browsers_home_page_is_one_query_once_warm(client, demo, django_assert_num_queries):
    client.get("/")
    with django_assert_num_queries(1):  # the content version; the page comes from the cache
        html = client.get("/").content.decode()
    assert "Start here:" in html


def test_a_new_browsers_review_page_is_one_query_once_warm(client, demo, django_assert_num_queries):
    client.get("/review")
    # the lesson to start with; the page's frame holds no content, so no content version
    with django_assert_num_queries(1):
        html = client.get("/review").content.decode()
    assert "Start here:" in html and "<!--slot:" not in html


@pytest.mark.parametrize("lessons", [1, 20])
def test_home_page_for_a_learner_with_every_started_lesson_learned(
    demo, lessons, django_assert_num_queries
):
    """The one branch that looks further: nothing due and the latest lessons all learned, so
    the call to action names the next lesson to learn, one more query whatever the history."""
    client = Client()
    learner = learner_with(client, demo, 1)
    Memory.objects.filter(learner=learner).delete()
    started = [demo] + [
        make_lesson(title=f"Learned {n}", slug=f"learned-{n}") for n in range(lessons - 1)
    ]
    for lesson in started:
        learn_everything_in(learner, lesson, reviewed_days_ago=1)
    client.get("/")
    with django_assert_num_queries(7):
        html = client.get("/").content.decode()
    assert "Learn something new: " in html and "Review " not in html


@pytest.mark.parametrize("query", ["?missed=1", "?summary=1"])
def test_after_a_round_its_summary_and_missed_practice_cost_the_same_for_1_or_500_items(
    demo, query
):
    """The round's end on its constellation, and "Practise the ones I missed": the same
    queries for a learner with one memory as for one with 500."""
    counts = []
    for items in (1, 500):
        client = Client()
        learner_with(client, demo, items)  # the round's first answer, right
        finish_round(client, demo, [False] + [True] * 7)  # question 2 missed, then retried
        path = practice_url(demo) + query
        client.get(path)  # warm the content caches
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path)
        assert response.status_code == 200
        assert ("question" in response.context) == (query == "?missed=1")
        counts.append(len(captured))
    # "Practise the ones I missed" reads one more: the question's latest showing, so that it
    # asks in another order and its verdict marks the choices in the order it asked them.
    assert counts == [PRACTICE_PAGE_QUERIES + (query == "?missed=1")] * 2, counts


def test_a_new_rounds_first_question_reads_one_more_for_its_practice_notice(
    learner_client, demo, django_assert_num_queries
):
    """The whole practice page at a new round: its reads, and the learner's answers to the
    lesson within the hour (does an answer now count?), said before the first question."""
    learner_client.get(practice_url(demo) + "?new=1")
    with django_assert_num_queries(QUESTION_PAGE_QUERIES):
        page = learner_client.get(practice_url(demo) + "?new=1")
    assert "Question 1 of 8" in page.content.decode()


def test_review_with_nothing_due(client, demo, django_assert_num_queries):
    answer(client, demo, right=True)
    client.get("/review")
    # the page's reads (the header's counter; the first item due: none); when the next comes
    # back; the next step, as home gives it: the learner's lessons (one aggregate), then the
    # lesson to continue or the next lesson to learn (one query, whatever the catalogue's size)
    with django_assert_num_queries(REVIEW_PAGE_QUERIES + 3):
        html = client.get("/review").content.decode()
    assert "Nothing is due right now" in html and "Continue: " in html
