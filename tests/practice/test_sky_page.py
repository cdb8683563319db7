from __future__ import annotations

import re
from datetime import timedelta

import time_machine
from django.utils import timezone

from lessons.models import Flashcard, Question
from tests.conftest import SEED_PATH
from tests.factories import make_lesson
from tests.practice.helpers import answer, finish_round


def all_stars() -> int:
    """Every question and flashcard of the published demo lessons is a star."""
    return Question.objects.count() + Flashcard.objects.count()


def seed_stars(lesson) -> int:
    return lesson.questions.count() + lesson.flashcards.count()


def star_labels(html: str) -> list[str]:
    return re.findall(r'<circle class="star [^"]*"[^>]*role="img"><title>([^<]*)</title>', html)


def test_a_new_browsers_sky_is_all_unlit(client, demo):
    response = client.get("/sky")
    html = response.content.decode()
    labels = star_labels(html)
    total = sum(
        lesson.questions.count() + lesson.flashcards.count()
        for lesson in type(demo).objects.published()
    )
    assert len(labels) == total == all_stars()
    assert all(": unlit, not answered yet" in label for label in labels)
    assert (
        "<strong>0 learned so far</strong> (0 lit, 0 kindled), 0 due, 0 missed and "
        f"{total} unlit" in html
    )
    assert "<strong>Stars ever lit: 0</strong>" in html
    assert not response.cookies


def test_a_half_right_round_kindles_exactly_the_stars_it_passed(client, demo):
    pattern = [True, False] * 4 + [False] * 4  # retries of the misses fail again
    finish_round(client, demo, pattern)
    html = client.get("/sky").content.decode()
    kindled = [label for label in star_labels(html) if ": kindled," in label]
    assert sorted(kindled) == sorted(
        f"Question {n} of {demo.title}: kindled, next review in 2 days" for n in (1, 3, 5, 7)
    )
    missed = [label for label in star_labels(html) if ": missed," in label]
    assert sorted(missed) == sorted(
        f"Question {n} of {demo.title}: missed, back in 24 hours" for n in (2, 4, 6, 8)
    )
    unlit = all_stars() - 8
    assert (
        "<strong>4 learned so far</strong> (0 lit, 4 kindled), 0 due, 4 missed and "
        f"{unlit} unlit" in html
    )


def test_stars_come_due_and_the_forecast_shows_them_coming(client, demo):
    finish_round(client, demo, [True] * 8)
    html = client.get("/sky").content.decode()
    assert "Items coming due, day by day" in html
    assert re.search(r"<td>\w{3} \d+ \w{3}</td><td>8</td>", html)
    with time_machine.travel(timezone.now() + timedelta(days=5), tick=False):
        html = client.get("/sky").content.decode()
        assert "<strong>0 learned so far</strong> (0 lit, 0 kindled), 8 due" in html
        assert ": due, came due 3 days ago" in html
        assert '<a href="/review">Revisit the due ones</a>' in html


def test_needs_first_links_are_drawn_between_constellations(client, demo):
    html = client.get("/sky").content.decode()
    assert html.count('<line class="needs-first"') == 2


def test_every_star_is_in_the_table_view(client, demo):
    assert 'href="/sky/table"' in client.get("/sky").content.decode()
    html = client.get("/sky/table").content.decode()
    rows = re.findall(
        r'<tr><th scope="row">(Question|Flashcard) \d+</th><td>(unlit|kindled|lit|due|missed)</td>',
        html,
    )
    assert len(rows) == all_stars()


def test_sky_query_count_is_fixed_whatever_the_number_of_stars(
    client, demo, django_assert_num_queries
):
    finish_round(client, demo, [True] * 8)
    # session, learner, published lessons, their items, the learner's memories, needs-first
    # links, the header's sky counter
    with django_assert_num_queries(7):
        client.get("/sky")
    for n in range(5):
        make_lesson(title=f"More {n}", slug=f"more-{n}", flashcards=6)
    with django_assert_num_queries(7):
        client.get("/sky")


def test_the_lesson_page_shows_this_learners_constellation(client, demo):
    html = client.get(SEED_PATH).content.decode()
    assert f'id="constellation-{demo.public_id}"' in html
    assert f"<strong>0 lit, 0 kindled</strong>, 0 due, 0 missed, {seed_stars(demo)} unlit" in html
    finish_round(client, demo, [True] * 8)
    html = client.get(SEED_PATH).content.decode()
    assert (
        f"<strong>0 lit, 8 kindled</strong>, 0 due, 0 missed, {seed_stars(demo) - 8} unlit" in html
    )


def test_the_header_counter_appears_for_a_learner_and_links_to_the_sky(client, demo):
    html = client.get("/").content.decode()
    assert '<a id="sky-counter" class="sky-counter" href="/sky">' in html
    assert "Your sky" in html
    finish_round(client, demo, [True] * 3 + [False] * 5 + [True] * 5)
    html = client.get("/").content.decode()
    # The five right retries came after the answers were shown: practice, so no star for them.
    assert "3 learned so far · 0 due" in html
    with time_machine.travel(timezone.now() + timedelta(days=4), tick=False):
        html = client.get("/learn/computing/").content.decode()
        assert "0 learned so far · 8 due" in html


def test_an_htmx_answer_updates_the_constellation_and_counter_out_of_band(client, demo):
    response = answer(client, demo, right=True, htmx=True)
    html = response.content.decode()
    figure = f'<figure id="constellation-{demo.public_id}" class="constellation"'
    assert figure + ' data-hx-swap-oob="true">' in html
    assert '<a id="sky-counter" class="sky-counter" href="/sky" data-hx-swap-oob="true">' in html
    assert "1 learned so far · 0 due" in html
    assert (
        f"<strong>0 lit, 1 kindled</strong>, 0 due, 0 missed, {seed_stars(demo) - 1} unlit" in html
    )
    assert '<circle class="star kindled"' in html
