from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import time_machine
from django.test import Client
from django.utils import timezone

from lessons.models import Flashcard, Question
from practice import sky
from practice.models import Memory
from tests.conftest import SEED_PATH
from tests.factories import make_area, make_lesson, make_subject
from tests.practice.helpers import answer, counter_text, finish_round


def all_stars() -> int:
    """Every question and flashcard of the published demo lessons is a star."""
    return Question.objects.count() + Flashcard.objects.count()


def seed_stars(lesson) -> int:
    return lesson.questions.count() + lesson.flashcards.count()


def whole_sky(html: str) -> str:
    """The wide screens' canvas alone, where every star is drawn (the phone cards show them
    through <use>)."""
    return html[html.index('<figure class="sky-figure">') : html.index("</figure>")]


def star_labels(html: str) -> list[str]:
    return re.findall(
        r'<circle class="star [^"]*"[^>]*role="img"><title>([^<]*)</title>', whole_sky(html)
    )


def test_a_new_browsers_sky_counts_nothing_and_shows_every_lesson_as_not_started(client, demo):
    response = client.get("/sky")
    html = response.content.decode()
    lessons = list(type(demo).objects.published())
    # No star is drawn, and none is counted as "unlit": the catalogue is not the learner's.
    assert star_labels(html) == []
    assert "unlit, of" not in html and " lit · " not in html
    assert "<strong>Nothing lit yet</strong>" in html
    assert "You have not started a lesson yet. 3 lessons not started yet." in html
    assert '<a href="/">Choose a lesson to start</a>' in html
    for lesson in lessons:
        assert f'aria-label="{lesson.title}: not started"' in html
        link = f'<a href="{lesson.get_absolute_url()}">{lesson.title}</a>'
        assert f'{link} <span class="muted">not started</span>' in html
    assert 'class="sky-card"' not in html
    assert not response.cookies


def test_a_half_right_round_kindles_exactly_the_stars_it_passed(client, demo):
    pattern = [True, False] * 4 + [False] * 4  # retries of the misses fail again
    finish_round(client, demo, pattern)
    html = client.get("/sky").content.decode()
    kindled = [label for label in star_labels(html) if ": kindled:" in label]
    assert sorted(kindled) == sorted(
        f"Question {n} of {demo.title}: kindled: next review in 2 days" for n in (1, 3, 5, 7)
    )
    missed = [label for label in star_labels(html) if "missed" in label]
    assert sorted(missed) == sorted(
        f"Question {n} of {demo.title}: unlit, missed: next review in 1 day" for n in (2, 4, 6, 8)
    )
    # Only the started lesson's stars count; the two others are "not started", not "unlit".
    assert len(star_labels(html)) == seed_stars(demo)
    unlit = seed_stars(demo) - 8
    assert (
        f"In the 1 lesson you have started: 0 lit, 4 kindled and {unlit + 4} unlit, of "
        f"{seed_stars(demo)} stars; 0 due and 4 missed. Stars lit at least once: 0. "
        "2 lessons not started yet." in html
    )
    assert "Nothing is due right now." in html


def test_a_started_lesson_is_a_card_with_its_counts_in_words(client, demo):
    finish_round(client, demo, [True, False] * 4 + [False] * 4)
    html = client.get("/sky").content.decode()
    cards = re.findall(r'<a class="sky-card" href="([^"]+)">', html)
    assert cards == [demo.get_absolute_url()]
    assert f'<span class="card-name">{demo.title}</span>' in html
    total, unlit = seed_stars(demo), seed_stars(demo) - 8
    assert (
        f'<span class="card-counts">0 lit, 4 kindled, {unlit + 4} unlit of {total}; 4 missed'
        "</span>" in html
    )
    # The whole sky links every constellation to its lesson, reachable by keyboard.
    assert 'tabindex="-1"' not in whole_sky(html)
    link = f'<a class="constellation-link" href="{demo.get_absolute_url()}"'
    assert f'{link} aria-label="{demo.title}: 0 lit, 4 kindled' in html


def test_a_returning_learner_sees_what_they_achieved_and_what_to_do_next(client, demo):
    finish_round(client, demo, [True] * 8)
    Memory.objects.filter(question__position__lte=3).update(
        evidence=sky.CONFIRMED, lit_at=timezone.now()
    )
    html = client.get("/sky").content.decode()
    assert "<strong>3 lit · 5 kindled</strong> · 0 due" in html
    with time_machine.travel(timezone.now() + timedelta(days=5), tick=False):
        html = client.get("/sky").content.decode()
    # All eight have come due: what was earned stays, and the page says what to do next
    # before anything else.
    assert "<strong>3 lit · 5 kindled</strong> · 8 due" in html
    assert '<a class="button" href="/review">8 due: review now</a>' in html
    assert (
        html.index("3 lit · 5 kindled")
        < html.index("8 due: review now")
        < html.index("Your constellations")
    )
    assert ": lit, due: came due 3 days ago" in html


def test_the_forecast_counts_the_overdue_under_today_in_dates_a_person_reads(client, demo):
    finish_round(client, demo, [True] * 8)
    html = client.get("/sky").content.decode()
    assert "<summary>The numbers, day by day</summary>" in html
    assert "<td>Today, with those already due</td><td>0</td>" in html
    day = (timezone.now() + timedelta(days=2)).strftime("%a %-d %b")  # kindled: back in 2 days
    assert f"<td>{day}</td><td>8</td>" in html
    with time_machine.travel(timezone.now() + timedelta(days=5), tick=False):
        html = client.get("/sky").content.decode()
    assert "<td>Today, with those already due</td><td>8</td>" in html
    assert ">Today</text>" in html


def test_needs_first_links_are_drawn_between_constellations(client, demo):
    html = client.get("/sky").content.decode()
    assert html.count('<line class="needs-first"') == 2


def test_the_table_has_every_star_of_the_started_lessons_and_names_the_others(client, demo):
    assert 'href="/sky/table"' in client.get("/sky").content.decode()
    finish_round(client, demo, [True] * 8)
    html = client.get("/sky/table").content.decode()
    rows = re.findall(
        r'<tr><th scope="row">(Question|Flashcard) \d+</th><td>(unlit|kindled|lit|due|missed)</td>',
        html,
    )
    assert len(rows) == seed_stars(demo)
    assert rows.count(("Question", "kindled")) == 8
    others = type(demo).objects.published().exclude(pk=demo.pk)
    assert others.count() == 2
    for lesson in others:
        assert f'<li><a href="{lesson.get_absolute_url()}">{lesson.title}</a></li>' in html


def test_the_table_is_one_subject_a_page(client, demo):
    astronomy = make_subject(name="Astronomy", slug="astronomy", position=9)
    area = make_area(astronomy, name="Planets", slug="planets")
    make_lesson(title="Counting Moons", slug="counting-moons", area=area)
    html = client.get("/sky/table").content.decode()
    assert "<h1>Your sky as a table: Computing</h1>" in html
    assert "Counting Moons" not in html
    assert '<a href="/sky/table?subject=computing" aria-current="page">Computing</a>' in html
    html = client.get("/sky/table?subject=astronomy").content.decode()
    assert "<h1>Your sky as a table: Astronomy</h1>" in html
    assert "Counting Moons" in html and demo.title not in html
    assert '<a href="/sky/table?subject=astronomy" aria-current="page">Astronomy</a>' in html
    response = client.get("/sky/table?subject=no-such-subject")
    assert response.status_code == 404
    assert "This page is not in our sky" in response.content.decode()


def test_sky_query_count_is_fixed_whatever_the_number_of_stars(
    client, demo, django_assert_num_queries
):
    finish_round(client, demo, [True] * 8)
    # the session, the content version, published lessons, their items, needs-first links,
    # the learner's memories, the header's sky counter
    with django_assert_num_queries(7):
        client.get("/sky")
    for n in range(5):
        make_lesson(title=f"More {n}", slug=f"more-{n}", flashcards=6)
    with django_assert_num_queries(7):
        client.get("/sky")


def test_the_lesson_page_shows_this_learners_constellation(client, demo):
    html = client.get(SEED_PATH).content.decode()
    assert f'id="constellation-{demo.public_id}"' in html
    assert f"<strong>0 lit, 0 kindled</strong>, {seed_stars(demo)} unlit" in html
    finish_round(client, demo, [True] * 8)
    html = client.get(SEED_PATH).content.decode()
    assert f"<strong>0 lit, 8 kindled</strong>, {seed_stars(demo) - 8} unlit" in html


def test_the_header_counter_appears_for_a_learner_and_links_to_the_sky(client, demo):
    html = client.get("/").content.decode()
    assert '<a id="sky-counter" class="sky-counter" href="/sky">' in html
    assert "Your sky" in html
    finish_round(client, demo, [True] * 3 + [False] * 5 + [True] * 5)
    html = client.get("/").content.decode()
    # The five right retries came after the answers were shown: practice, so no star for them.
    assert counter_text(html) == "Your sky: 3 kindled"
    with time_machine.travel(timezone.now() + timedelta(days=4), tick=False):
        html = client.get("/learn/computing/").content.decode()
        assert counter_text(html) == "Your sky: 3 kindled · 8 due"


def test_an_htmx_answer_updates_the_constellation_and_counter_out_of_band(client, demo):
    response = answer(client, demo, right=True, htmx=True)
    html = response.content.decode()
    figure = f'<figure id="constellation-{demo.public_id}" class="constellation"'
    assert figure + ' data-hx-swap-oob="true">' in html
    assert '<a id="sky-counter" class="sky-counter" href="/sky" data-hx-swap-oob="true">' in html
    assert counter_text(html) == "Your sky: 1 kindled"
    assert f"<strong>0 lit, 1 kindled</strong>, {seed_stars(demo) - 1} unlit" in html
    assert '<circle class="star kindled"' in html


def test_a_new_browsers_sky_is_shared_until_the_content_or_the_day_changes(
    demo, assert_max_queries
):
    """Every new browser sees the same sky, kept whole (lightmysky.lib.pagecache); its forecast
    counts days from today, so the kept page lasts the day, and an edit shows at once."""
    late = datetime(2026, 12, 3, 23, 50, tzinfo=UTC)
    with time_machine.travel(late, tick=False):
        first = Client().get("/sky").content.decode()
        with assert_max_queries(1):  # the content version
            again = Client().get("/sky")
        assert again.content.decode() == first and not again.templates  # kept, not rendered
        assert "no-store" in again["Cache-Control"] and again["Vary"] == "Cookie"
        table = Client().get("/sky/table").content.decode()
    assert "<td>Fri 4 Dec</td>" in first

    with time_machine.travel(late + timedelta(minutes=20), tick=False):
        next_day = Client().get("/sky").content.decode()
        assert "<td>Fri 4 Dec</td>" not in next_day and "<td>Sat 5 Dec</td>" in next_day

        make_lesson(title="Counting Moons", slug="counting-moons", area=demo.area)
        assert "Counting Moons" in Client().get("/sky").content.decode()
        assert "Counting Moons" in Client().get("/sky/table").content.decode()
    assert "Counting Moons" not in first + table


def test_a_learners_sky_is_never_the_one_kept_for_new_browsers(client, demo):
    assert "Nothing lit yet" in Client().get("/sky").content.decode()  # kept now
    answer(client, demo, right=True)
    html = client.get("/sky").content.decode()
    assert "<strong>0 lit · 1 kindled</strong>" in html
    assert "Nothing lit yet" in Client().get("/sky").content.decode()


def test_a_kindled_star_long_overdue_is_drawn_dim(client, demo):
    """It was drawn at full strength, brighter than lit stars beside it (outside learner
    review): now a kindled star fades as a lit one does, dimmest once due."""
    answer(client, demo, right=True)
    kindled = r'<circle class="star kindled[^"]*" [^>]* fill-opacity="([\d.]+)"'
    assert re.findall(kindled, client.get("/sky").content.decode()) == ["1.00"]
    with time_machine.travel(Memory.objects.get().due + timedelta(days=16)):
        assert re.findall(kindled, client.get("/sky").content.decode()) == ["0.45"]
