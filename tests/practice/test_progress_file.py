"""Progress files stay bounded and honest, however they were written."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import timedelta
from html import unescape

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from lessons.models import Lesson
from lightmysky.ratelimit import Limit
from practice import progress_file
from practice.models import Learner, Memory, Review, TransferCode
from tests.practice.helpers import (
    answer,
    exported,
    finish_round,
    form_token,
    iso,
    practice_url,
    progress_document,
    progress_item,
)
from tests.practice.test_progress import make_code, upload


def learner_of(client: Client) -> Learner:
    return Learner.objects.get(public_id=client.session["learner"])


def test_an_item_keeps_only_its_newest_reviews_and_the_page_says_which(client, demo):
    question = demo.questions.first()
    many = progress_file.MAX_REVIEWS_PER_ITEM + 5
    response = upload(client, progress_document(progress_item(question, many)))
    assert response.status_code == 200
    html = unescape(response.content.decode())
    assert f"question {question.key} of lesson {demo.public_id}" in html
    assert "only the newest of the file's answers that fit were imported for 1 item" in html
    kept = Review.objects.filter(learner=learner_of(client))
    assert kept.count() == progress_file.MAX_REVIEWS_PER_ITEM
    oldest_kept = kept.order_by("reviewed_at").first().reviewed_at
    assert oldest_kept.date() == (timezone.now() - timedelta(days=many + 1 - 5)).date()


def test_an_import_that_would_pass_the_learners_limit_is_refused_whole(client, demo, monkeypatch):
    monkeypatch.setattr(progress_file, "MAX_REVIEWS_PER_LEARNER", 30)
    finish_round(client, demo, [True] * 8)
    questions = list(demo.questions.all()[:3])
    response = upload(client, progress_document(*(progress_item(q, 10) for q in questions)))
    assert response.status_code == 400
    html = response.content.decode()
    assert "more than the 30 a browser may keep. Nothing was changed.</p>" in html
    assert Review.objects.filter(learner=learner_of(client)).count() == 8


def test_items_of_a_draft_lesson_are_not_imported(client, demo):
    question = demo.questions.first()
    Lesson.objects.filter(pk=demo.pk).update(status=Lesson.Status.DRAFT)
    response = upload(client, progress_document(progress_item(question, 3)))
    assert response.status_code == 200
    assert "1 skipped because it is no longer on this site" in response.content.decode()
    assert not Review.objects.exists()


def test_imported_answers_are_graded_again_by_todays_question(client, demo):
    question = demo.questions.first()
    wrong = next(c["letter"] for c in question.labelled_choices if not c["correct"])
    upload(client, progress_document(progress_item(question, 2, answer=wrong)))
    reviews = Review.objects.filter(learner=learner_of(client))
    assert [r.correct for r in reviews] == [False, False]  # the file said true
    assert {r.origin for r in reviews} == {Review.Origin.IMPORTED}


def test_imported_answers_do_not_move_the_editors_statistics(client, demo):
    editor = User.objects.create_superuser("ed", "ed@example.org", "pw-for-tests-only")
    question = demo.questions.first()
    answer(client, demo, right=False)
    admin = Client()
    admin.force_login(editor)
    page = f"/admin/lessons/question/{question.pk}/change/"
    before = admin.get(page).content.decode()
    assert "1 attempt by 1 learner" in before
    for _ in range(3):
        upload(Client(), progress_document(progress_item(question, 5)))
    after = admin.get(page).content.decode()
    assert "1 attempt by 1 learner; right the first time: 0% of 1" in after
    assert "picked 5 time(s)" not in after


def test_a_relearning_item_without_its_step_is_refused(client, demo):
    question = demo.questions.first()
    now = timezone.now()
    item = progress_item(question, 1) | {
        "state": "relearning",
        "step": None,
        "stability": 2.0,
        "difficulty": 5.0,
        "due": iso(now),
        "last_review": iso(now - timedelta(days=1)),
    }
    response = upload(client, progress_document(item))
    assert response.status_code == 400
    assert "“step” is needed for an item in the relearning state" in response.content.decode()
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"version": 1, "n": ' + b"9" * 5000 + b"}", "a number far too long"),
        (b'{"version": 1, "items": [], "x": "\\ud800"}', "not valid Unicode"),
        (b'{"version": 1, "items": [], "x": "a\\u0000b"}', "a NUL character"),
    ],
    ids=["long integer", "lone surrogate", "NUL"],
)
def test_files_no_export_could_contain_are_refused_not_errors(client, demo, raw, message):
    response = upload(client, raw)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_nul_inside_an_answer_is_refused_and_nothing_is_stored(client, demo):
    item = progress_item(demo.questions.first(), 1, answer="A\u0000")
    response = upload(client, progress_document(item))
    assert response.status_code == 400
    assert not Review.objects.exists()


def test_an_import_after_the_learner_was_erased_elsewhere_lands_in_a_new_learner(client, demo):
    answer(client, demo, right=True)
    saved = exported(client)
    Learner.objects.all().delete()  # "Forget everything" on the other device, or pruning
    response = upload(client, saved)
    assert response.status_code == 200
    assert "Imported 1 item" in response.content.decode()
    assert Review.objects.filter(learner=learner_of(client)).count() == 1


def test_the_export_streams_and_reads_back_to_the_same_progress(client, demo):
    finish_round(client, demo, [True, False] + [True] * 7)
    response = client.get("/progress/export")
    assert response.streaming
    assert response["Content-Type"] == "application/json; charset=utf-8"
    saved = json.loads(b"".join(response.streaming_content))
    fresh = Client()
    upload(fresh, saved)
    assert exported(fresh)["items"] == saved["items"]


def test_a_file_names_each_stars_evidence_in_the_sky_words_and_reads_older_files(client, demo):
    finish_round(client, demo, [True, False] + [True] * 7)
    saved = exported(client)
    assert sorted(item["evidence"] for item in saved["items"]) == ["kindled"] * 7 + ["unlit"]
    # A file of version 2 said "none" for an unlit star.
    older = json.loads(json.dumps(saved).replace('"evidence": "unlit"', '"evidence": "none"'))
    older["version"] = 2
    assert "none" in [item["evidence"] for item in older["items"]]
    fresh = Client()
    assert upload(fresh, older).status_code == 200
    assert exported(fresh)["items"] == saved["items"]


def test_prune_trims_the_oldest_reviews_of_a_learner_over_the_limit(client, demo, monkeypatch):
    monkeypatch.setattr(progress_file, "MAX_REVIEWS_PER_LEARNER", 5)
    finish_round(client, demo, [True] * 8)
    newest = list(Review.objects.order_by("-reviewed_at", "-pk")[:5])
    call_command("prune_learners", stdout=io.StringIO())
    assert list(Review.objects.order_by("-reviewed_at", "-pk")) == newest
    assert Memory.objects.count() == 8


def reload_and_post_in_tabs(client: Client, url: str, tabs: int, data: dict) -> list:
    tokens = [form_token(client.get(url)) for _ in range(tabs)]
    return [client.post(url, {"token": token} | data) for token in tokens]


def test_a_due_item_answered_in_several_tabs_is_recorded_once(client, demo):
    with time_machine.travel(timezone.now() - timedelta(hours=2)):
        answer(client, demo, right=True)
    Memory.objects.update(due=timezone.now() - timedelta(minutes=1))
    question = Memory.objects.get().question
    responses = reload_and_post_in_tabs(
        client, "/review", 5, {"choice": sorted(question.correct_ids)}
    )
    assert {r.status_code for r in responses} == {302}
    assert Review.objects.count() == 2  # the round's answer and one review


def test_a_flashcard_rated_in_several_tabs_is_recorded_once(client, demo):
    url = demo.get_absolute_url() + "/flashcards"
    responses = reload_and_post_in_tabs(client, url, 3, {"rating": "3"})
    assert {r.status_code for r in responses} == {302}
    assert Review.objects.count() == 1
    later = form_token(client.get(url))  # shown again after the rating: a new rating
    client.post(url, {"token": later, "rating": "4"})
    assert Review.objects.count() == 2


def test_transfer_codes_are_stored_as_a_keyed_hash(client, demo, settings):
    answer(client, demo, right=True)
    code = make_code(client).replace("-", "")
    stored = TransferCode.objects.get().code_hash
    assert stored != hashlib.sha256(f"lightmysky-transfer:{code}".encode()).hexdigest()
    settings.SECRET_KEY = "another-secret-key-for-this-test-only-0123456789"
    assert Client().post("/progress/adopt", {"code": code}).status_code == 400


def test_adopting_a_code_into_a_browser_with_progress_merges_both(client, demo):
    finish_round(client, demo, [True] * 8)
    code = make_code(client)
    other = Client()
    other.get(practice_url(demo))
    answer(other, demo, right=False)
    response = other.post("/progress/adopt", {"code": code})
    assert response.status_code == 302
    assert Learner.objects.count() == 1
    assert Review.objects.count() == 9


def test_the_progress_page_says_how_much_a_file_and_a_browser_may_hold(client, db):
    html = client.get("/progress").content.decode()
    assert "A file may be up to 5 MB. A browser keeps up to 40,000 answers" in html


def test_a_loop_of_exports_is_stopped_with_a_429(window_start, client, demo, settings):
    answer(client, demo, right=True)
    allowed = Limit(*settings.RATE_LIMITS["export"]).per_browser
    for _ in range(allowed):
        assert client.get("/progress/export").status_code == 200
    refused = client.get("/progress/export")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0


def test_a_network_imports_a_bounded_number_of_answers_a_day(window_start, client, demo, settings):
    """Each file and browser is capped, but fresh browsers are free: without a budget per
    address, a loop of them filled the database with imported answers (security review)."""
    finish_round(client, demo, [True] * 8)
    document = exported(client)
    answers = sum(len(item["reviews"]) for item in document["items"])
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"imported_answers": Limit(0, answers, 86400)}
    first, second = Client(), Client()
    assert upload(first, document).status_code == 200
    assert Review.objects.filter(learner=learner_of(first)).count() == answers
    refused = upload(second, document)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "This network has imported as many answers as it may in a day" in unescape(
        refused.content.decode()
    )
    assert (
        "learner" not in second.session
        or not Review.objects.filter(learner=learner_of(second)).exists()
    )


def test_a_file_is_matched_to_the_lessons_in_batches_and_loses_no_item(client, demo, monkeypatch):
    # Each query names at most two batches' values, whatever the file's size: SQLite refuses a
    # statement with more than 32,766 and PostgreSQL one with more than 65,535.
    monkeypatch.setattr(progress_file, "READ_BATCH", 3)
    questions = list(demo.questions.all())
    response = upload(client, progress_document(*(progress_item(q, 1) for q in questions)))
    assert response.status_code == 200
    assert f"Imported {len(questions)} items" in response.content.decode()
    imported = Review.objects.filter(learner=learner_of(client))
    assert sorted(imported.values_list("question_id", flat=True)) == sorted(q.pk for q in questions)
