from __future__ import annotations

from lessons.models import Lesson
from tests.factories import make_area, make_lesson


def test_home_lists_subjects_and_their_published_lessons(client, demo):
    make_lesson(title="Unfinished draft", slug="unfinished", status=Lesson.Status.DRAFT)
    html = client.get("/").content.decode()
    assert '<a href="/learn/computing/">Computing</a>' in html
    assert "Training Across Many Devices" in html
    assert "Message Passing and Asynchronous Work" in html
    assert "Unfinished draft" not in html


def test_home_query_count_is_fixed(client, demo, django_assert_num_queries):
    # the content version; published lessons with their subjects and areas; the lesson to
    # start with (cold)
    with django_assert_num_queries(3):
        client.get("/")
    make_lesson(title="One more", slug="one-more")
    with django_assert_num_queries(3):
        client.get("/")
    with django_assert_num_queries(1):  # warm: the content version only
        client.get("/")


def test_subject_page_groups_lessons_by_area(client, demo):
    html = client.get("/learn/computing/").content.decode()
    machine_learning = html.find('<h2 id="area-machine-learning">')
    concurrency = html.find('<h2 id="area-concurrency-and-distributed-systems">')
    assert machine_learning != -1 and concurrency != -1
    assert html.find("Message Passing and Asynchronous Work") > concurrency
    assert html.find("Training Across Many Devices") > machine_learning


def test_subject_page_query_count_is_fixed(client, demo, django_assert_num_queries):
    # 1: the content version; 2: the subject; 3: how many published lessons it has (for its
    # pages of 50); 4: this page's lessons with their areas.
    with django_assert_num_queries(4):
        client.get("/learn/computing/")
    make_lesson(area=make_area(slug="new-area", name="New Area"), title="Extra", slug="extra")
    with django_assert_num_queries(4):
        client.get("/learn/computing/")


def test_an_unknown_subject_is_a_404(client, db):
    assert client.get("/learn/astrology/").status_code == 404
