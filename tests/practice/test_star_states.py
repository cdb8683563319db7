"""Each star state reached through real answers and time travel, as a browser reaches it.

unlit: never answered right from memory; kindled: answered right, not yet confirmed on a later
day; lit: answered right at a review a day or more after the review before it; due: time to come
back; missed: answered wrong last time. "Stars ever lit" never goes down.
"""

from __future__ import annotations

import importlib
import re
from datetime import timedelta

import time_machine
from django.apps import apps
from django.test import Client
from django.utils import timezone

from practice import sky
from practice.models import Learner, Memory
from tests.practice.helpers import (
    asked_again_as_practice,
    asked_question_or_none,
    current_question,
    exported,
    finish_round,
    form_token,
    practice_url,
    right_choices,
    wrong_choices,
)
from tests.practice.test_progress import upload


def stars(html: str, lesson) -> dict[int, tuple[str, str]]:
    """The lesson's question stars on a page: number -> (drawn class, accessible name)."""
    found = {}
    pattern = (
        r'<circle class="star (\w+)[^"]*"[^>]*role="img"><title>Question (\d+) of '
        + re.escape(lesson.title)
        + r": ([^<]*)</title>"
    )
    for drawn, number, words in re.findall(pattern, html):
        found[int(number)] = (drawn, words)
    return found


def words(html: str, lesson) -> list[str]:
    """Each question's state word, in question order, from its accessible name."""
    return [described.split(",")[0] for _, (_, described) in sorted(stars(html, lesson).items())]


def memories(client: Client) -> list[Memory]:
    learner = Learner.objects.get(public_id=client.session["learner"])
    return list(Memory.objects.filter(learner=learner).order_by("question__position"))


def review_all(client: Client, *, miss: set[int] = frozenset()) -> None:
    """Answer everything /review asks, missing the questions at these positions, and then
    answering right each miss it asks again at the end of the set (practice)."""
    for _ in range(40):
        page = client.get("/review")
        question = asked_question_or_none(page)
        if question is None:
            return
        wrong = question.position in miss and not asked_again_as_practice(page)
        letters = wrong_choices(question) if wrong else right_choices(question)
        response = client.post("/review", {"token": form_token(page), "choice": letters})
        assert response.status_code == 302
    raise AssertionError("/review kept asking")


def test_a_new_browser_answering_the_seed_round_right_sees_kindled_stars_not_lit(client, demo):
    before = client.get("/sky").content.decode()
    # Not started: an outline with its name, no stars counted as unlit.
    assert words(before, demo) == []
    assert f'aria-label="{demo.title}: not started"' in before
    finish_round(client, demo, [True] * 8)

    html = client.get("/sky").content.decode()
    assert set(words(html, demo)) == {"kindled"}
    assert all(drawn == "kindled" for drawn, _ in stars(html, demo).values())
    assert stars(html, demo)[1][1] == "kindled, next review in 2 days"
    assert "<strong>8 learned so far</strong> (0 lit, 8 kindled), 0 due, 0 missed" in html
    assert "<strong>Stars ever lit: 0</strong>" in html
    assert "8 learned so far · 0 due" in html  # the header counts kindled stars as learned
    lesson_page = client.get(demo.get_absolute_url()).content.decode()
    assert "<strong>0 lit, 8 kindled</strong>" in lesson_page
    table = client.get("/sky/table").content.decode()
    assert table.count("<td>kindled</td>") == 8 and "<td>lit</td>" not in table
    assert {item["star"] for item in exported(client)["items"]} == {"kindled"}
    assert all(memory.lit_at is None for memory in memories(client))


def test_a_right_answer_the_same_day_keeps_them_kindled_and_one_a_day_later_lights_them(
    client, demo
):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(hours=23), tick=False):
        finish_round(client, demo, [True] * 8)  # the round again, the same evening
        assert set(words(client.get("/sky").content.decode(), demo)) == {"kindled"}
    later = start + timedelta(hours=23) + timedelta(days=1)
    with time_machine.travel(later, tick=False):
        finish_round(client, demo, [True] * 8)
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"lit"}
        assert all(drawn == "lit" for drawn, _ in stars(html, demo).values())
        assert "<strong>8 learned so far</strong> (8 lit, 0 kindled)" in html
        assert "<strong>Stars ever lit: 8</strong>" in html
        home = client.get("/").content.decode()
        assert "<strong>8 learned so far · 0 due</strong> · stars ever lit: 8" in home
    assert {memory.lit_at for memory in memories(client)} == {later}


def test_kindled_stars_come_due_and_a_right_review_then_lights_them(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=3), tick=False):
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"due"}
        assert all(drawn == "due" for drawn, _ in stars(html, demo).values())
        assert stars(html, demo)[1][1].startswith("due, came due ")
        assert "0 learned so far · 8 due" in html
        review_all(client)
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"lit"}
        assert "<strong>Stars ever lit: 8</strong>" in html


def test_a_miss_then_a_right_retry_leaves_the_star_missed_not_kindled(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False] + [True] * 7 + [True])  # the last: q1's retry
        html = client.get("/sky").content.decode()
        assert stars(html, demo)[1] == ("missed", "missed, back in 1 day")
        assert words(html, demo)[1:] == ["kindled"] * 7
        assert "<strong>7 learned so far</strong> (0 lit, 7 kindled), 0 due, 1 missed" in html
        first = memories(client)[0]
        assert (first.evidence, first.lit_at) == (sky.NO_EVIDENCE, None)
        assert exported(client)["items"][0]["star"] == "missed"
    with time_machine.travel(start + timedelta(days=1, minutes=1), tick=False):
        # It has come back: due, and its name still says it was missed.
        html = client.get("/sky").content.decode()
        assert stars(html, demo)[1] == ("due", "due, missed last time, came due under an hour ago")
        assert "7 learned so far · 1 due" in html
        review_all(client)  # remembered a day after the miss showed the answer: lit
        assert stars(client.get("/sky").content.decode(), demo)[1][0] == "lit"


def test_a_right_answer_marked_as_a_guess_does_not_kindle(client, demo):
    question, token = current_question(client, practice_url(demo))
    client.post(
        practice_url(demo), {"token": token, "choice": right_choices(question), "guessed": "yes"}
    )
    html = client.get("/sky").content.decode()
    drawn, described = stars(html, demo)[1]
    assert drawn == "unlit"
    assert described.startswith("unlit, not yet answered right from memory, next review in")
    assert "0 learned so far · 0 due" in html


def test_stars_ever_lit_never_drops_when_lit_stars_lapse_or_come_due(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=1), tick=False):
        finish_round(client, demo, [True] * 8)
        assert "<strong>Stars ever lit: 8</strong>" in client.get("/sky").content.decode()
    due_at = max(memory.due for memory in memories(client))
    with time_machine.travel(due_at + timedelta(minutes=1), tick=False):
        review_all(client, miss={1, 2, 3})  # three forgotten, five remembered
        html = client.get("/sky").content.decode()
        assert words(html, demo) == ["missed"] * 3 + ["lit"] * 5
        assert "<strong>5 learned so far</strong> (5 lit, 0 kindled), 0 due, 3 missed" in html
        assert "<strong>Stars ever lit: 8</strong>" in html
        assert "stars ever lit: 8" in client.get("/").content.decode()
    with time_machine.travel(due_at + timedelta(days=400), tick=False):
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"due"}
        assert "0 learned so far · 8 due" in html
        assert "<strong>Stars ever lit: 8</strong>" in html


def test_the_export_and_import_round_trip_keeps_the_evidence(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False] + [True] * 7 + [True])
    with time_machine.travel(start + timedelta(days=1, hours=1), tick=False):
        finish_round(client, demo, [True, True, True, True, False, False, False, False, True])
        document = exported(client)
        kept = [(m.question_id, m.evidence, m.last_rating, m.lit_at) for m in memories(client)]
        assert {m.evidence for m in memories(client)} >= {sky.CONFIRMED, sky.NO_EVIDENCE}
        fresh = Client()
        assert upload(fresh, document).status_code == 200
        assert [(m.question_id, m.evidence, m.last_rating, m.lit_at) for m in memories(fresh)] == (
            kept
        )
        # A file from before the flags existed: the same flags, replayed from its reviews.
        for item in document["items"]:
            for name in ("star", "evidence", "lit_at"):
                del item[name]
        older = Client()
        assert upload(older, document).status_code == 200
        assert [(m.question_id, m.evidence, m.last_rating, m.lit_at) for m in memories(older)] == (
            kept
        )
        html = client.get("/sky").content.decode()
        for other in (fresh, older):
            assert words(other.get("/sky").content.decode(), demo) == words(html, demo)


def test_the_migration_replays_what_answering_stored(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False, True, True, True, True, True, True, True, False])
    with time_machine.travel(start + timedelta(days=1, hours=1), tick=False):
        finish_round(client, demo, [True, True, False, True, True, True, True, True, True])
    stored = [(m.pk, m.evidence, m.lit_at) for m in memories(client)]
    assert {evidence for _, evidence, _ in stored} == {sky.NO_EVIDENCE, sky.CONFIRMED}
    Memory.objects.update(evidence=sky.NO_EVIDENCE, lit_at=None)
    migration = importlib.import_module("practice.migrations.0007_memory_evidence_lit_at")
    migration.replay_evidence(apps, None)
    assert [(m.pk, m.evidence, m.lit_at) for m in memories(client)] == stored


def test_agents_read_the_same_five_words(client, demo):
    instructions = client.get("/agent-instructions.md").content.decode()
    for word in sky.WORDS:
        assert f"- **{word}**: " in instructions
    assert "stars ever lit" in instructions
    twin = client.get(demo.get_absolute_url() + ".md").content.decode()
    assert "unlit, kindled, lit, due or missed" in twin
