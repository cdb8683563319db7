"""Driving the practice pages the way a browser does: read the form, post it back."""

from __future__ import annotations

import html
import json
import re
import threading
from datetime import datetime, timedelta

from django.db import connection
from django.test import Client
from django.utils import timezone

from lessons.models import Lesson, Question
from practice.templatetags.moments import to_the_minute

TOKEN_FIELD = re.compile(r'<input type="hidden" name="token" value="([^"]*)">')
CHOICE_FIELD = re.compile(r'name="choice" value="([^"]*)"')
CSRF_FIELD = re.compile(r'<input type="hidden" name="csrfmiddlewaretoken" value="([^"]*)">')

# What a learner's pages read, on either database. The lesson page: the session, the content
# version (the key of the lesson's cached page data), the learner's memories of the lesson and
# the header's counter. The whole practice page: those, and the latest round with its answers.
# /review: the session, the header's counter and the first item due with its lesson and item.
LESSON_PAGE_QUERIES = 4
PRACTICE_PAGE_QUERIES = 5
REVIEW_PAGE_QUERIES = 3
# A page asking a question of a round reads one more: whether the learner saw its answer within
# the hour (answering it is then practice, which the page says first). A new round's first
# question reads the lesson's answers within the hour instead, for its notice as well.
QUESTION_PAGE_QUERIES = PRACTICE_PAGE_QUERIES + 1


def counter_text(html: str) -> str:
    """The header's sky counter as read aloud: "Your sky: 3 lit · 5 kindled · 2 due"."""
    found = re.search(r'<a id="sky-counter"[^>]*>(.*?)</a>', html, re.S)
    assert found, "no header counter"
    return re.sub(r"<[^>]+>", "", found[1]).strip()


def form_token(response) -> str:
    """The attempt token the page's answer form carries, as a browser would post it back."""
    found = TOKEN_FIELD.search(response.content.decode())
    assert found, response.content.decode()[:2000]
    return html.unescape(found[1])


def csrf_field(response) -> str:
    """The CSRF token the page's form carries (masked afresh on every showing)."""
    found = CSRF_FIELD.search(response.content.decode())
    assert found, response.content.decode()[:2000]
    return found[1]


def shows_a_form(response) -> bool:
    return TOKEN_FIELD.search(response.content.decode()) is not None


def asked_question(response) -> Question:
    """The question the page's answer form asks, known by its choices' identities."""
    shown = {html.unescape(value) for value in CHOICE_FIELD.findall(response.content.decode())}
    assert shown, response.content.decode()[:2000]
    asked = [q for q in Question.objects.all() if {c["id"] for c in q.choices} == shown]
    assert len(asked) == 1, f"{len(asked)} questions have the choices {shown}"
    return asked[0]


def asked_question_or_none(response) -> Question | None:
    """The question asked, or None for a page that asks none (a flashcard, or nothing due)."""
    return asked_question(response) if CHOICE_FIELD.search(response.content.decode()) else None


def asked_again_as_practice(response) -> bool:
    """/review asking a question missed in this set once more, as practice."""
    return "Once more, as practice" in response.content.decode()


def practice_url(lesson: Lesson) -> str:
    return lesson.get_absolute_url() + "/practice"


def right_choices(question: Question) -> list[str]:
    """What the answer form sends for the right answer: the right choices' identities."""
    return sorted(question.correct_ids)


def wrong_choices(question: Question) -> list[str]:
    return [c["id"] for c in question.choices if not c["correct"]][:1]


def current_question(client: Client, url: str) -> tuple[Question, str]:
    response = client.get(url)
    assert response.status_code == 200
    return asked_question(response), form_token(response)


def answer(
    client: Client, lesson: Lesson, *, right: bool, htmx: bool = False, url: str | None = None
):
    url = url or practice_url(lesson)
    question, token = current_question(client, url)
    choices = right_choices(question) if right else wrong_choices(question)
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(url, {"token": token, "choice": choices}, headers=headers)


def finish_round(client: Client, lesson: Lesson, pattern: list[bool]) -> None:
    """Answer the round's questions right or wrong in turn until the round ends."""
    for right in pattern:
        response = answer(client, lesson, right=right)
        assert response.status_code == 302, response.content[:500]


def exported(client: Client) -> dict:
    """The browser's progress file, as `GET /progress/export` streams it."""
    response = client.get("/progress/export")
    assert response.status_code == 200
    return json.loads(b"".join(response.streaming_content))


def shown_moment(moment: datetime) -> str:
    """A moment as pages write it: at the next whole minute (to_the_minute), in UTC (before
    the browser puts it in the learner's zone)."""
    return f"{to_the_minute(moment):%A %-d %B, %H:%M} UTC"


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def progress_item(question: Question, reviews: int, *, answer: str = "A", **fields) -> dict:
    """A progress file's item for a question: `reviews` right answers a day apart, to today."""
    start = timezone.now() - timedelta(days=reviews + 1)
    return {
        "lesson": question.lesson.public_id,
        "item": f"question:{question.key}",
        "kind": "question",
        "state": None,
        "reviews": [
            {
                "rating": 3,
                "reviewed_at": iso(start + timedelta(days=n)),
                "duration_ms": 1000,
                "answer": answer,
                "correct": True,
            }
            for n in range(reviews)
        ],
    } | fields


def progress_document(*items: dict) -> dict:
    return {"version": 1, "exported_at": iso(timezone.now()), "items": list(items)}


def learn_everything_in(learner, lesson: Lesson, *, reviewed_days_ago: int) -> None:
    """Every star of the lesson lit, last reviewed `reviewed_days_ago` days ago, due in 20."""
    from practice import sky
    from practice.models import Memory

    now = timezone.now()
    items = [("question", q) for q in lesson.questions.all()] + [
        ("flashcard", f) for f in lesson.flashcards.all()
    ]
    Memory.objects.bulk_create(
        Memory(
            learner=learner,
            lesson=lesson,
            **{kind: item},
            state=2,
            stability=30.0,
            difficulty=5.0,
            due=now + timedelta(days=20),
            last_review=now - timedelta(days=reviewed_days_ago),
            last_rating=3,
            evidence=sky.CONFIRMED,
            lit_at=now - timedelta(days=reviewed_days_ago),
        )
        for kind, item in items
    )


def post_together(session_cookie: str, url: str, forms: list[dict], *, timeout: float = 30) -> list:
    """Post the forms from threads released at one instant, each with its own connection, as
    several tabs or a script would; the responses, in the order they came."""
    barrier = threading.Barrier(len(forms))
    responses: list = []
    errors: list = []

    def post(data: dict) -> None:
        browser = Client()
        browser.cookies["sessionid"] = session_cookie
        try:
            barrier.wait(timeout=10)
            responses.append(browser.post(url, data))
        except Exception as error:  # surfaced by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(data,)) for data in forms]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not errors, errors
    return responses


def rate_every_card(client, url, rating: str, *, first: str | None = None) -> str:
    """One pass through the lesson's cards, each given `rating` (the first card `first`, if
    given); the page it ends on."""
    ratings = iter([first or rating])
    response = client.get(url)
    while "card" in response.context and response.context["card"] is not None:
        data = {"token": form_token(response), "rating": next(ratings, rating)}
        for field, name in (("again", "again_ids"), ("set", "set_start")):
            if response.context.get(name):
                data[field] = response.context[name]
        response = client.get(client.post(url, data)["Location"])
    return response.content.decode()
