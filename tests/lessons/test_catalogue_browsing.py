"""Finding a lesson in the 1,250-lesson catalogue `make bench` builds: a subject page lists at
most 50 lessons, with the learner's states, and pages through the rest; search finds a lesson
among them and its results page stays small."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from lessons.views import SUBJECT_PAGE_LESSONS
from tools import catalogue

KB = 1024


@pytest.fixture
def lessons(demo):
    return catalogue.add_lessons(1250)  # 125 lessons in each of 10 subjects


def listed(html: str) -> list[str]:
    return re.findall(r'<article class="lesson-card">\s*<h3><a href="[^"]*">([^<]*)</a>', html)


def test_a_subject_page_lists_at_most_50_lessons_and_pages_through_the_rest(client, lessons):
    first = client.get("/learn/catalogue-0/").content.decode()
    assert len(listed(first)) == SUBJECT_PAGE_LESSONS == 50
    assert "Lessons 1 to 50 of 125 · page 1 of 3" in first
    assert 'rel="next" href="/learn/catalogue-0/?page=2"' in first and 'rel="prev"' not in first
    last = client.get("/learn/catalogue-0/", {"page": "3"}).content.decode()
    assert len(listed(last)) == 25 and "Lessons 101 to 125 of 125" in last
    assert 'rel="prev" href="/learn/catalogue-0/?page=2"' in last and 'rel="next"' not in last
    every = set()
    for page in (1, 2, 3):
        every |= set(listed(client.get("/learn/catalogue-0/", {"page": page}).content.decode()))
    assert len(every) == 125
    for odd in ("0", "99", "x", "-1", "9" * 30):  # a page that is not one shows a real page
        response = client.get("/learn/catalogue-0/", {"page": odd})
        assert response.status_code == 200 and listed(response.content.decode())
    twin = client.get("/learn/catalogue-0.md", {"page": "2"}).content.decode()
    assert len(re.findall(r"^- \[", twin, re.M)) == 50
    assert "Next page: http://127.0.0.1:8000/learn/catalogue-0.md?page=3" in twin


def test_a_learner_sees_their_states_on_every_page_of_a_subject(lessons):
    started = [lesson for lesson in lessons if lesson.subject.slug == "catalogue-0"][60:62]
    learner = catalogue.learner_of_lessons(started, timezone.now())
    client = Client()
    client.cookies["sessionid"] = catalogue.session_of(learner)
    html = client.get("/learn/catalogue-0/", {"page": "2"}).content.decode()
    states = re.findall(r'<p class="lesson-state">(.*?)</p>', html)
    assert len(states) == 50
    assert sum("not started" not in state for state in states) == 2


def test_search_finds_a_lesson_in_the_catalogue_and_its_page_stays_small(client, lessons):
    response = client.get("/search", {"q": "pipeline bubble"})
    titles = re.findall(
        r'<li class="search-hit">\s*<h2><a href="[^"]*">([^<]*)</a>', response.content.decode()
    )
    assert titles[0].startswith("Training Across Many Devices")
    broad = client.get("/search", {"q": "catalogue lesson"})
    html = broad.content.decode()
    assert "Lessons 1 to 20 of 1250" in html
    assert len(broad.content) <= 30 * KB
    assert client.get("/api/v1/search", {"q": "catalogue lesson", "page": 63}).json()["results"]
