"""Whatever progress file is imported, every later page and answer still works (no 500, ever)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from lessons.models import Lesson
from lightmysky.ratelimit import Limit
from practice.models import Learner
from tests.practice.helpers import asked_question_or_none, form_token, practice_url, shows_a_form


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def seconds_from_now(low: int, high: int):
    return st.integers(min_value=low, max_value=high).map(
        lambda seconds: timezone.now() + timedelta(seconds=seconds)
    )


YEARS = 3 * 365 * 86400

# Files an export could be: every value in range, moments in the past (due dates either way).
past = seconds_from_now(-YEARS, 0).map(iso)
plausible_review = st.fixed_dictionaries(
    {
        "rating": st.integers(min_value=1, max_value=4),
        "reviewed_at": past,
        "duration_ms": st.one_of(st.none(), st.integers(min_value=0, max_value=600_000)),
        "answer": st.sampled_from(["A", "B", "C", "D", "A,B", "B,C,D", "", "Z", "Again", "Easy"]),
        "correct": st.one_of(st.none(), st.booleans()),
    }
)
plausible_memory = st.one_of(
    st.fixed_dictionaries({"state": st.none()}),
    st.fixed_dictionaries(
        {
            "state": st.sampled_from(["learning", "review", "relearning"]),
            "step": st.integers(min_value=0, max_value=100),
            "stability": st.floats(min_value=0.001, max_value=1_000_000),
            "difficulty": st.floats(min_value=1, max_value=10),
            "due": seconds_from_now(-YEARS, YEARS).map(iso),
            "last_review": past,
        }
    ),
)

# Anything at all in the same shape: wrong types, NaN, huge numbers, moments far away, any text.
anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.booleans(),
    st.none(),
    st.text(max_size=40),
)
any_moment = st.one_of(
    st.datetimes(
        min_value=datetime(1960, 1, 1), max_value=datetime(2300, 1, 1), timezones=st.just(UTC)
    ).map(iso),
    anything,
)
wild_review = st.fixed_dictionaries(
    {
        "rating": anything,
        "reviewed_at": any_moment,
        "duration_ms": anything,
        "answer": anything,
        "correct": anything,
    }
)
wild_memory = st.fixed_dictionaries(
    {
        "state": st.one_of(st.sampled_from(["learning", "review", "relearning"]), anything),
        "step": anything,
        "stability": anything,
        "difficulty": anything,
        "due": any_moment,
        "last_review": any_moment,
    }
)


def progress_files(items: list[tuple[str, str]]):
    """Files naming the lesson's own items (and an unknown one): two in three could have been
    exported, the third has anything in any field."""

    def file_of(memory, review):
        item = st.tuples(
            st.sampled_from(items + [("question", "ffffffff")]),
            memory,
            st.lists(review, max_size=4),
        ).map(
            lambda parts: {
                "lesson": LESSON_ID,
                "item": f"{parts[0][0]}:{parts[0][1]}",
                "kind": parts[0][0],
                **parts[1],
                "reviews": parts[2],
            }
        )
        return st.fixed_dictionaries(
            {
                "version": st.just(1),
                "exported_at": st.just(iso(timezone.now())),
                "items": st.lists(item, max_size=8, unique_by=lambda i: i["item"]),
            }
        )

    plausible = file_of(plausible_memory, plausible_review)
    return st.one_of(plausible, plausible, file_of(wild_memory, wild_review))


LESSON_ID = "mt__e-JwIxHek"


@pytest.fixture
def lesson_items(demo) -> list[tuple[str, str]]:
    lesson = Lesson.objects.get(public_id=LESSON_ID)
    return [("question", q.key) for q in lesson.questions.all()] + [
        ("flashcard", f.key) for f in lesson.flashcards.all()
    ]


def test_no_imported_file_can_break_a_later_page_or_answer(demo, lesson_items, settings):
    unlimited = Limit(per_browser=10**6, per_address=10**6, seconds=60)
    settings.RATE_LIMITS = dict.fromkeys(settings.RATE_LIMITS, unlimited)
    imports: list[int] = []

    @hypothesis_settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(document=progress_files(lesson_items))
    def check(document: dict) -> None:
        Learner.objects.all().delete()
        browser = Client(raise_request_exception=False)
        content = json.dumps(document).encode()
        response = browser.post(
            "/progress/import", {"file": SimpleUploadedFile("progress.json", content)}
        )
        assert response.status_code in (302, 400), response.content[:300]
        imports.append(response.status_code)
        answer_everything_once(browser, demo)
        for path in ("/review", "/sky", "/sky/table", demo.get_absolute_url(), "/progress"):
            assert browser.get(path).status_code == 200, path
        export = browser.get("/progress/export")
        assert export.status_code == 200
        b"".join(export.streaming_content)

    check()
    assert imports.count(302) >= 10, f"too few files imported to test what follows: {imports}"


def answer_everything_once(browser: Client, lesson: Lesson) -> None:
    """A whole practice round, every flashcard rated, and the first due item reviewed."""
    url = practice_url(lesson)
    for _ in range(16):
        page = browser.get(url)
        assert page.status_code == 200
        question = asked_question_or_none(page)
        if question is None:
            break
        response = browser.post(
            url, {"token": form_token(page), "choice": sorted(question.correct_ids)}
        )
        assert response.status_code == 302, response.content[:300]
    cards = lesson.get_absolute_url() + "/flashcards"
    for number in range(1, lesson.flashcards.count() + 1):
        page = browser.get(f"{cards}?card={number}")
        response = browser.post(cards, {"token": form_token(page), "rating": "3"})
        assert response.status_code == 302, response.content[:300]
    page = browser.get("/review")
    assert page.status_code == 200
    if shows_a_form(page):
        question = asked_question_or_none(page)
        data = {"choice": sorted(question.correct_ids)} if question else {"rating": "1"}
        assert browser.post("/review", {"token": form_token(page)} | data).status_code == 302
