"""The review caps hold when imports into one browser are sent at the same time (security
review N1: five at once kept 120,000 reviews), on SQLite and on PostgreSQL alike, and the export of
a browser at the cap imports again."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Count, Max
from django.test import Client
from django.utils import timezone

from lessons.models import Flashcard, Question
from practice import progress_file
from practice.models import Learner, Review
from tests.practice.helpers import (
    answer,
    exported,
    iso,
    post_together,
    progress_document,
    progress_item,
)
from tests.practice.test_progress import make_code, upload

pytestmark = pytest.mark.django_db(transaction=True)

FILES = 5
UNDER_WAY = "Progress is already being imported into this browser."


def learner_of(client: Client) -> Learner:
    return Learner.objects.get(public_id=client.session["learner"])


def another_devices_file(questions: list[Question], reviews: int, device: int) -> bytes:
    """A file of `reviews` answers for each question, at moments no other device's file shares."""
    start = timezone.now() - timedelta(days=reviews + 1, minutes=device)
    items = [
        progress_item(question, 0)
        | {
            "reviews": [
                {
                    "rating": 3,
                    "reviewed_at": iso(start + timedelta(days=n)),
                    "duration_ms": 1000,
                    "answer": "A",
                    "correct": True,
                }
                for n in range(reviews)
            ]
        }
        for question in questions
    ]
    return json.dumps(progress_document(*items)).encode()


def test_imports_sent_at_once_keep_one_browser_within_both_caps(demo, monkeypatch, settings):
    # 2,000 answers a browser stand for the 40,000, so that five files overshoot it as in the
    # review; 700 answers for each of two questions overshoot the 1,000 an item may keep.
    monkeypatch.setattr(progress_file, "MAX_REVIEWS_PER_LEARNER", 2_000)
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"import": (100, 100, 3600)}
    browser = Client()
    answer(browser, demo, right=True)  # the browser has its learner before the race
    questions = list(demo.questions.order_by("pk")[:2])
    files = [another_devices_file(questions, 700, device) for device in range(FILES)]

    forms = [{"file": SimpleUploadedFile("progress.json", content)} for content in files]
    responses = post_together(
        browser.cookies["sessionid"].value, "/progress/import", forms, timeout=120
    )

    statuses = [response.status_code for response in responses]
    assert len(statuses) == FILES and 302 in statuses  # imported: to the result
    assert set(statuses) <= {302, 400, 409}, statuses
    for response in responses:
        if response.status_code == 409:
            assert UNDER_WAY in response.content.decode()
    kept = Review.objects.filter(learner=learner_of(browser))
    assert kept.count() <= 2_000
    per_item = kept.values("question_id").annotate(n=Count("pk")).aggregate(most=Max("n"))
    assert per_item["most"] <= progress_file.MAX_REVIEWS_PER_ITEM
    assert Learner.objects.get(pk=learner_of(browser).pk).import_started_at is None

    # What the race left is a file that imports again, whole.
    saved = exported(browser)
    fresh = Client()
    assert upload(fresh, saved).status_code == 200
    assert exported(fresh)["items"] == saved["items"]


def test_an_import_while_another_is_written_is_refused_with_a_409_and_changes_nothing(client, demo):
    answer(client, demo, right=True)
    learner = learner_of(client)
    Learner.objects.filter(pk=learner.pk).update(import_started_at=timezone.now())
    response = upload(client, progress_document(progress_item(demo.questions.last(), 3)))
    assert response.status_code == 409
    assert f"{UNDER_WAY} Wait until that import has finished" in response.content.decode()
    assert Review.objects.filter(learner=learner).count() == 1


def test_a_code_adopted_while_its_progress_is_being_imported_into_waits_and_stays_valid(
    client, demo
):
    answer(client, demo, right=True)
    code = make_code(client)
    Learner.objects.filter(pk=learner_of(client).pk).update(import_started_at=timezone.now())
    phone = Client()
    answer(phone, demo, right=False)

    response = phone.post("/progress/adopt", {"code": code})
    assert response.status_code == 400
    assert "Wait a minute, then enter the code again: it still works." in response.content.decode()
    assert Learner.objects.count() == 2 and Review.objects.count() == 2

    Learner.objects.update(import_started_at=None)  # that import has finished
    assert phone.post("/progress/adopt", {"code": code}).status_code == 302
    assert Learner.objects.count() == 1 and Review.objects.count() == 2


def test_a_claim_left_by_a_worker_that_died_mid_import_lapses(client, demo):
    answer(client, demo, right=True)
    learner = learner_of(client)
    abandoned = timezone.now() - progress_file.CLAIM_LIFETIME - timedelta(seconds=1)
    Learner.objects.filter(pk=learner.pk).update(import_started_at=abandoned)
    response = upload(client, progress_document(progress_item(demo.questions.last(), 3)))
    assert response.status_code == 200
    assert Review.objects.filter(learner=learner).count() == 4
    assert Learner.objects.get(pk=learner.pk).import_started_at is None


def test_the_export_of_a_browser_at_the_cap_imports_again_whole(client, demo):
    """40 items of 1,000 answers: the most a browser can keep, exported and imported again."""
    answer(client, demo, right=True)
    learner = learner_of(client)
    Review.objects.filter(learner=learner).delete()
    items = [("question", q) for q in Question.objects.filter(lesson=demo)]
    items += [("flashcard", f) for f in Flashcard.objects.all()]
    items += [("question", q) for q in Question.objects.exclude(lesson=demo)]
    items = items[: progress_file.MAX_REVIEWS_PER_LEARNER // progress_file.MAX_REVIEWS_PER_ITEM]
    assert len(items) == 40
    start = timezone.now() - timedelta(days=400)
    Review.objects.bulk_create(
        Review(
            learner=learner,
            lesson_id=item.lesson_id,
            **{kind: item},
            attempt=f"full-{number}-{n}",
            rating=3,
            reviewed_at=start + timedelta(minutes=n * 9),
            duration_ms=599_999,
            answer="A,B,C" if kind == "question" else "",
            correct=kind == "question" or None,
            origin=Review.Origin.ANSWERED,
        )
        for number, (kind, item) in enumerate(items)
        for n in range(progress_file.MAX_REVIEWS_PER_ITEM)
    )

    content = b"".join(client.get("/progress/export").streaming_content)
    assert len(content) < progress_file.MAX_FILE_BYTES

    fresh = Client()
    response = upload(fresh, content)
    assert response.status_code == 200, response.content.decode()[-500:]
    assert Review.objects.filter(learner=learner_of(fresh)).count() == 40_000
