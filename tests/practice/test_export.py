from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from lessons.models import Question
from practice import scheduling, sky
from practice.models import Learner
from tests.practice.helpers import (
    answer,
    asked_question,
    exported,
    finish_round,
    form_token,
    right_choices,
    wrong_choices,
)


def parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


def test_a_browser_with_no_progress_exports_an_empty_list(client, db):
    response = client.get("/progress/export")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="lightmysky-progress-')
    document = json.loads(b"".join(response.streaming_content))
    assert document["items"] == []
    assert document["version"] == 3
    assert set(document["scheduler"]) == {
        "desired_retention",
        "learning_steps",
        "relearning_steps",
        "maximum_interval",
        "parameters",
    }
    assert not response.cookies


def test_the_export_shows_every_review(client, demo):
    finish_round(client, demo, [False] + [True] * 7 + [True])
    token = form_token(client.get(demo.get_absolute_url() + "/flashcards"))
    client.post(demo.get_absolute_url() + "/flashcards", {"token": token, "rating": "2"})
    document = exported(client)
    items = document["items"]
    assert len(items) == 9
    assert sum(len(item["reviews"]) for item in items) == 10
    first = next(i for i in items if i["item"] == f"question:{demo.questions.get(position=1).key}")
    assert [r["correct"] for r in first["reviews"]] == [False, True]
    assert [r["rating"] for r in first["reviews"]] == [1, 3]
    # The retry came after the right answer was shown: exported, flagged, never scheduled.
    assert [r["practice"] for r in first["reviews"]] == [False, True]
    assert first["lesson"] == demo.public_id and first["kind"] == "question"
    assert first["state"] == "review"
    card = next(i for i in items if i["kind"] == "flashcard")
    assert card["reviews"][0] | {"reviewed_at": None, "duration_ms": None} == {
        "rating": 2,
        "reviewed_at": None,
        "duration_ms": None,
        "answer": "Hard",
        "correct": None,
        "practice": False,
    }
    for item in items:
        for review in item["reviews"]:
            assert review["reviewed_at"].endswith("Z")
            assert isinstance(review["duration_ms"], int)


def test_replaying_each_items_log_reproduces_its_exported_memory_state(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False, True, False, True, True, True, True, True, False, True])
    with time_machine.travel(start + timedelta(days=9), tick=False):
        for _ in range(8):  # odd questions remembered, even ones forgotten
            response = client.get("/review")
            question = asked_question(response)
            choice = right_choices(question) if question.position % 2 else wrong_choices(question)
            client.post("/review", {"token": form_token(response), "choice": choice})
    document = exported(client)
    saved = document["scheduler"]
    config = scheduling.SchedulerSettings(
        desired_retention=saved["desired_retention"],
        learning_steps=tuple(saved["learning_steps"]),
        relearning_steps=tuple(saved["relearning_steps"]),
        maximum_interval=saved["maximum_interval"],
        enable_fuzzing=False,
        parameters=tuple(saved["parameters"]),
    )
    assert any(len(item["reviews"]) >= 3 for item in document["items"])
    assert any(r["practice"] for item in document["items"] for r in item["reviews"])
    for item in document["items"]:
        scheduled = [r for r in item["reviews"] if not r["practice"]]
        replayed = scheduling.replay(
            [(r["rating"], parse(r["reviewed_at"])) for r in scheduled], config
        )
        assert replayed.stability == item["stability"], item["item"]
        assert replayed.difficulty == item["difficulty"], item["item"]
        assert scheduling.STATES[replayed.state] == item["state"]
        assert replayed.last_review == parse(item["last_review"])
        # The star's evidence replays too: practice answers never kindled or lit anything.
        question = Question.objects.get(key=item["item"].split(":", 1)[1])
        evidence = sky.evidence_of(
            [
                (sky.outcome_of(r["rating"], r["correct"]), parse(r["reviewed_at"]))
                for r in scheduled
            ],
            guess_rate=sky.guess_rate(len(question.choices), several=question.takes_several),
        )
        assert sky.EVIDENCE[evidence.level] == item["evidence"], item["item"]
        assert evidence.lit_at == (parse(item["lit_at"]) if item["lit_at"] else None)
    # Odd questions were remembered nine days on: a second right answer (or a first one after
    # a miss) keeps a star kindled. Even ones were missed.
    stars = sorted(item["star"] for item in document["items"])
    assert stars == ["kindled"] * 4 + ["unlit, missed"] * 4


def test_export_belongs_to_this_browser_only(client, demo):
    answer(client, demo, right=True)
    assert len(exported(client)["items"]) == 1
    assert exported(Client())["items"] == []


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps({"version": True, "exported_at": "2026-01-01T00:00:00Z", "items": []}).encode(),
        json.dumps(
            {"version": 1, "exported_at": "0001-01-01T00:00:00+05:00", "items": []}
        ).encode(),
    ],
    ids=["deeply nested", "version true", "year one"],
)
def test_odd_progress_files_are_refused_not_errors(client, db, content):
    response = client.post("/progress/import", {"file": SimpleUploadedFile("p.json", content)})
    assert response.status_code == 400
    assert not Learner.objects.exists()


def test_a_progress_file_saved_with_a_byte_order_mark_is_read(client, demo):
    answer(client, demo, right=True)
    content = "\ufeff".encode() + b"".join(client.get("/progress/export").streaming_content)
    response = Client().post("/progress/import", {"file": SimpleUploadedFile("p.json", content)})
    assert response.status_code == 302  # to the result on the progress page
