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
from lightmysky.lib.ratelimit import Limit
from practice.models import Learner
from tests.practice.helpers import practice_url

# Moments an export could hold, and a few it could not (the far future, the distant past).
moments = st.datetimes(
    min_value=datetime(1960, 1, 1), max_value=datetime(2300, 1, 1), timezones=st.just(UTC)
)
recent = st.integers(min_value=-3 * 365 * 86400, max_value=3600).map(
    lambda seconds: timezone.now() + timedelta(seconds=seconds)
)
when = st.one_of(recent, recent, recent, moments).map(
    lambda m: m.isoformat().replace("+00:00", "Z")
)
# Mostly values an export could hold, so that many files import and the pages after them are
# exercised; sometimes anything at all.
plausible = st.floats(min_value=0.001, max_value=100)
numbers = st.one_of(
    plausible,
    plausible,
    plausible,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 0.001, 1, 5, 10, 36500, 1_000_000]),
    st.none(),
)
answers = st.one_of(
    st.sampled_from(["A", "B", "C", "D", "A,B", "A,A", "", "Z", "Again", "Good", "Easy"]),
    st.text(max_size=40),
)
review = st.fixed_dictionaries(
    {
        "rating": st.one_of(
            st.integers(min_value=1, max_value=4),
            st.integers(min_value=1, max_value=4),
            st.integers(min_value=0, max_value=5),
            st.booleans(),
        ),
        "reviewed_at": when,
        "duration_ms": st.one_of(st.none(), st.integers(min_value=-1, max_value=10**8)),
        "answer": answers,
        "correct": st.one_of(st.none(), st.booleans(), st.booleans(), st.just("yes")),
    }
)
memory = st.fixed_dictionaries(
    {
        "state": st.one_of(
            st.sampled_from(["learning", "review", "relearning"]),
            st.sampled_from(["learning", "review", "relearning"]),
            st.none(),
            st.just("asleep"),
        ),
        "step": st.one_of(
            st.none(),
            st.integers(min_value=0, max_value=3),
            st.integers(min_value=-1, max_value=120),
        ),
        "stability": numbers,
        "difficulty": numbers,
        "due": when,
        "last_review": st.one_of(when, when, st.none()),
    }
)


def progress_files(items: list[tuple[str, str]]):
    """Files naming the lesson's own items (and an unknown one) with any state and reviews."""
    item = st.tuples(
        st.sampled_from(items + [("question", "ffffffff")]), memory, st.lists(review, max_size=4)
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
            "exported_at": st.just(timezone.now().isoformat()),
            "items": st.lists(item, max_size=8, unique_by=lambda i: i["item"]),
        }
    )


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
        assert response.status_code in (200, 400), response.content[:300]
        imports.append(response.status_code)
        answer_everything_once(browser, demo)
        for path in ("/review", "/sky", "/sky/table", demo.get_absolute_url(), "/progress"):
            assert browser.get(path).status_code == 200, path
        export = browser.get("/progress/export")
        assert export.status_code == 200
        b"".join(export.streaming_content)

    check()
    assert imports.count(200) >= 5, f"too few files imported to test what follows: {imports}"


def answer_everything_once(browser: Client, lesson: Lesson) -> None:
    """A whole practice round, every flashcard rated, and the first due item reviewed."""
    url = practice_url(lesson)
    for _ in range(16):
        page = browser.get(url)
        assert page.status_code == 200
        question = page.context.get("question")
        if question is None:
            break
        response = browser.post(
            url, {"token": page.context["token"], "choice": question.correct_letters}
        )
        assert response.status_code == 302, response.content[:300]
    cards = lesson.get_absolute_url() + "/flashcards"
    for number in range(1, lesson.flashcards.count() + 1):
        page = browser.get(f"{cards}?card={number}")
        response = browser.post(cards, {"token": page.context["token"], "rating": "3"})
        assert response.status_code == 302, response.content[:300]
    page = browser.get("/review")
    assert page.status_code == 200
    if token := page.context.get("token"):
        item = page.context["item"]
        data = {"rating": "1"} if item.flashcard_id else {"choice": item.question.correct_letters}
        assert browser.post("/review", {"token": token} | data).status_code == 302
