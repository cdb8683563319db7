"""The sky of a catalogue of 10,000 stars (1,250 lessons), built in bulk as `make bench` builds
it: the page stays small for a learner who started 20 lessons and for a new browser, its
queries do not grow, and the table is one subject a page. Speed is a `make bench` figure."""

from __future__ import annotations

import gzip
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tools import catalogue

KB = 1024


@pytest.fixture
def lessons(demo):
    return catalogue.add_lessons(1250)


def client_of(lessons, started: int) -> Client:
    """A browser whose learner answered every question of the first `started` lessons (two in
    each subject for 20)."""
    client = Client()
    if started:
        learner = catalogue.learner_of_lessons(lessons[:started], timezone.now())
        client.cookies["sessionid"] = catalogue.session_of(learner)
    return client


def compressed(client: Client, path: str) -> int:
    response = client.get(path)
    assert response.status_code == 200
    return len(gzip.compress(response.content))


def canvas(html: str) -> str:
    return html[html.index('<figure class="sky-figure">') : html.index("</figure>")]


def test_a_learner_who_started_20_lessons_gets_their_stars_in_under_60_kb(lessons):
    client = client_of(lessons, 20)
    html = client.get("/sky").content.decode()
    assert compressed(client, "/sky") <= 60 * KB
    # The started lessons star by star, the other 1,233 as one faint path per subject, named
    # for screen readers in one line each that links to the subject's table.
    assert canvas(html).count('<circle class="star ') == 20 * 8
    assert "In the 20 lessons you have started:" in html
    assert "1233 lessons not started yet." in html
    subject_links = re.findall(
        r'<a class="constellation-link not-started" href="/sky/table\?subject=([a-z0-9-]+)" '
        r'aria-label="([^"]+)">',
        html,
    )
    assert len(subject_links) == 11  # the demo's subject and ten of the catalogue's
    assert ("catalogue-0", "Catalogue 0: 123 lessons not started, listed in the table") in (
        subject_links
    )


def test_a_new_browsers_sky_of_the_catalogue_is_under_30_kb(lessons):
    client = client_of(lessons, 0)
    assert compressed(client, "/sky") <= 30 * KB
    html = client.get("/sky").content.decode()
    assert '<circle class="star ' not in canvas(html)
    assert "1253 lessons not started yet." in html


def test_the_skys_queries_do_not_grow_with_the_catalogue_or_the_lessons_started(lessons):
    counts = []
    for started in (1, 20):
        client = client_of(lessons, started)
        client.get("/sky")  # warm the map
        with CaptureQueriesContext(connection) as captured:
            client.get("/sky")
        counts.append(len(captured))
    # the session, the content version, the learner's memories, the header's counter
    assert counts == [4, 4]


def test_the_table_of_the_catalogue_is_one_subject_a_page(lessons):
    client = client_of(lessons, 20)
    html = client.get("/sky/table?subject=catalogue-3").content.decode()
    assert compressed(client, "/sky/table?subject=catalogue-3") <= 30 * KB
    assert "<h1>Your sky as a table: Catalogue 3</h1>" in html
    started = re.findall(r"<caption><a href=[^>]+>(Catalogue lesson \d+)</a>", html)
    assert len(started) == 2
    assert html.count('<tr><th scope="row">Question ') == 2 * 8
    assert len(re.findall(r"<li><a href=\"/learn/catalogue-3/", html)) == 125 - 2


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plans")
def test_a_learners_pages_read_no_table_through(lessons):
    """Each statement of a learner's lesson, practice and review pages finds its rows by index.
    The header's counter leaves out memories of drafts, found in their own small index
    (lesson_unpublished): without the status in it, SQLite read every lesson's status."""
    client = client_of(lessons, 20)
    lesson = lessons[0].get_absolute_url()
    for path in (lesson, lesson + "/practice", "/review"):
        client.get(path)  # warm the cached parts
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        plans = []
        with connection.cursor() as cursor:
            for query in captured:
                cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
                plans += [row[3] for row in cursor.fetchall()]
        # A subquery's own rows (CO-ROUTINE stars, then SCAN stars) are not a table's.
        subqueries = {step.split()[-1] for step in plans if step.startswith("CO-ROUTINE")}
        read_through = [
            step
            for step in plans
            if step.startswith("SCAN")
            and step.split()[1] not in subqueries
            and "INDEX lesson_unpublished" not in step  # every draft, and only drafts
        ]
        assert read_through == [], f"{path}: {plans}"
        assert any("INDEX lesson_unpublished" in step for step in plans), f"{path}: {plans}"
