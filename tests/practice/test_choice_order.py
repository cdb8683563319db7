"""Choices move, letters don't lie: each showing shuffles a question's choices, and what is
recorded is the choice itself, whatever letter it had on screen."""

from __future__ import annotations

import html
import re
from pathlib import Path

from django.core.management import call_command
from django.test import Client

from lessons.models import Question
from practice.models import Memory, Review
from tests.practice.helpers import (
    asked_again_as_practice,
    asked_question,
    exported,
    finish_round,
    form_token,
    practice_url,
    progress_document,
    progress_item,
)

CHOICE = re.compile(
    r'<input type="(?:radio|checkbox)" name="choice" value="(?P<id>[^"]+)" '
    r'data-key="(?P<key>.)" data-number="(?P<number>\d)"[^>]*> '
    r'<span class="letter" aria-hidden="true">(?P<letter>.)</span> '
    r'<span class="choice-text">(?P<text>[^<]*)</span>'
)


def shown(page) -> list[dict]:
    """The choices of the question on a page, in the order and with the letters shown."""
    return [match.groupdict() for match in CHOICE.finditer(page.content.decode())]


def texts(page) -> list[str]:
    return [html.unescape(choice["text"]) for choice in shown(page)]


def written_texts(question: Question) -> list[str]:
    return [choice["text"] for choice in question.choices]


def test_a_reload_shows_the_same_order_and_the_keys_follow_what_is_shown(client, demo):
    url = practice_url(demo)
    first, again = client.get(url), client.get(url)
    assert texts(first) == texts(again)
    choices = shown(first)
    assert [c["letter"] for c in choices] == ["A", "B", "C", "D"]
    assert [c["key"] for c in choices] == ["a", "b", "c", "d"]
    assert [c["number"] for c in choices] == ["1", "2", "3", "4"]
    question = asked_question(first)
    by_id = {c["id"]: c for c in question.choices}
    assert [html.unescape(c["text"]) for c in choices] == [by_id[c["id"]]["text"] for c in choices]


def test_browsers_shown_one_question_in_other_orders_each_see_their_own(demo):
    """A question's card is remembered once for every order of its choices: each browser's
    page still shows its own order, each identity beside its own text and the letters in
    place, and answers by what it shows."""
    pages = {}
    for _ in range(8):
        browser = Client()
        page = browser.get(practice_url(demo))
        if asked_question(page).position == 1:
            pages.setdefault(tuple(texts(page)), (browser, page))
    assert len(pages) >= 2  # eight browsers drew at least two of its 24 orders
    for browser, page in pages.values():
        question = asked_question(page)
        by_id = {c["id"]: c for c in question.choices}
        choices = shown(page)
        assert [c["letter"] for c in choices] == ["A", "B", "C", "D"]
        assert [html.unescape(c["text"]) for c in choices] == [
            by_id[c["id"]]["text"] for c in choices
        ]
        right = sorted(question.correct_ids)
        assert (
            browser.post(
                practice_url(demo), {"token": form_token(page), "choice": right}
            ).status_code
            == 302
        )
    assert Review.objects.filter(correct=True).count() == len(pages)


def test_choices_are_shuffled_away_from_the_written_order(demo):
    """Across the lesson's questions (each in a new browser's first round) some are shown in
    another order than written, so the position of the right answer gives nothing away."""
    moved = shufflable = 0
    url = practice_url(demo)
    for _ in range(4):  # each browser's round has its own seed; a shuffle may leave an order be
        browser = Client()
        for _ in range(8):
            page = browser.get(url)
            question = asked_question(page)
            shufflable += not question.keep_choice_order
            moved += texts(page) != written_texts(question)
            right = next(c["id"] for c in shown(page) if c["id"] in question.correct_ids)
            browser.post(url, {"token": form_token(page), "choice": right})
    assert moved >= shufflable // 2 > 0


def test_the_answer_records_the_choice_picked_not_its_letter(client, demo):
    url = practice_url(demo)
    page = client.get(url)
    question = asked_question(page)
    third = shown(page)[2]  # whatever the question wrote third, the learner picked "C"
    client.post(url, {"token": form_token(page), "choice": third["id"]})
    review = Review.objects.get()
    assert review.answer == third["id"]
    assert review.correct is (third["id"] in question.correct_ids)
    feedback = client.get(url + "?answered=1")
    marked = feedback.context["feedback"]["choices"]
    assert [c["text"] for c in marked] == texts(page)  # the order the question was shown in
    assert [c["letter"] for c in marked if c["picked"]] == ["C"]


def test_the_retry_after_a_miss_shows_another_order(client, demo):
    url = practice_url(demo)
    first_showing = {}
    for _ in range(8):
        page = client.get(url)
        question = asked_question(page)
        first_showing[question.pk] = texts(page)
        wrong = next(c["id"] for c in shown(page) if c["id"] not in question.correct_ids)
        client.post(url, {"token": form_token(page), "choice": wrong})
    for _ in range(8):
        page = client.get(url)
        question = asked_question(page)
        assert "Once more: a question you missed" in page.content.decode()
        if not question.keep_choice_order:
            assert texts(page) != first_showing[question.pk], question.position
        client.post(url, {"token": form_token(page), "choice": sorted(question.correct_ids)})
    # The retries were practice: each memory is as its miss left it.
    assert all(memory.last_rating == 1 for memory in Memory.objects.all())


def test_a_question_whose_order_is_kept_is_shown_as_written(client, demo):
    Question.objects.filter(lesson=demo).update(keep_choice_order=True)
    for _ in range(3):
        page = client.get(practice_url(demo))
        assert texts(page) == written_texts(asked_question(page))
        client.post(
            practice_url(demo),
            {
                "token": form_token(page),
                "choice": sorted(asked_question(page).correct_ids),
            },
        )


def test_the_export_names_choices_by_identity_whatever_the_order_shown(client, demo):
    finish_round(client, demo, [True] * 8)
    by_key = {q.key: q for q in demo.questions.all()}
    for item in exported(client)["items"]:
        if item["kind"] == "question":
            question = by_key[item["item"].split(":")[1]]
            assert [r["answer"] for r in item["reviews"]] == [
                ",".join(sorted(question.correct_ids))
            ]


def test_a_version_1_file_with_letters_is_read_by_the_written_order(client, demo):
    question = demo.questions.get(position=1)
    second = question.choices[1]
    response = client.post(
        "/progress/import",
        {"file": _file(progress_document(progress_item(question, 1, answer="B")))},
    )
    assert response.status_code == 302
    review = Review.objects.get()
    assert review.answer == second["id"] and review.correct is second["correct"]


def test_reordering_choices_in_a_lesson_file_keeps_what_learners_answered(client, demo, tmp_path):
    finish_round(client, demo, [False] + [True] * 7 + [True])
    question = demo.questions.get(position=1)
    missed = Review.objects.filter(question=question).earliest("pk")
    picked_text = next(c["text"] for c in question.choices if c["id"] == missed.answer)
    memory_before = Memory.objects.get(question=question).memory_state

    call_command("export_lessons", tmp_path, stdout=_null())
    path = next(Path(tmp_path).glob(f"*{demo.public_id}*.md"))
    path.write_text(_reverse_choices_of_question(path.read_text(), 1))
    call_command("import_lessons", tmp_path, stdout=_null())

    question.refresh_from_db()
    assert written_texts(question)[0] != picked_text or len(question.choices) == 1
    assert next(c["text"] for c in question.choices if c["id"] == missed.answer) == picked_text
    assert Memory.objects.get(question=question).memory_state == memory_before


def test_rewording_a_choice_in_the_admin_keeps_its_identity(admin_client, demo):
    question = demo.questions.get(position=1)
    ids_before = [c["id"] for c in question.choices]
    page = admin_client.get(f"/admin/lessons/question/{question.pk}/change/")
    form = page.context["adminform"].form
    data = {f.name: form[f.name].value() for f in form}
    data = {k: v for k, v in data.items() if v not in (None, False)}
    data["choice_1_text"] += " (reworded)"
    response = admin_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 302
    question.refresh_from_db()
    assert [c["id"] for c in question.choices] == ids_before
    assert question.choices[1]["text"].endswith("(reworded)")


def _reverse_choices_of_question(text: str, position: int) -> str:
    """The lesson file with one question's choice blocks (each with its `why`) reversed."""
    blocks = re.split(r"(?=\n::: )", text)
    start = next(i for i, b in enumerate(blocks) if b.startswith(f"\n::: question {position} "))
    end = next(
        (
            i
            for i in range(start + 1, len(blocks))
            if not blocks[i].startswith(("\n::: choice", "\n::: why"))
        ),
        len(blocks),
    )
    choices: list[list[str]] = []
    for block in blocks[start + 1 : end]:
        if block.startswith("\n::: choice"):
            choices.append([block])
        else:
            choices[-1].append(block)
    letters = "ABCDEF"
    renamed = []
    for number, parts in enumerate(reversed(choices)):
        renamed.append(
            "".join(
                re.sub(r"^\n::: (choice|why) [A-F]", rf"\n::: \1 {letters[number]}", part)
                for part in parts
            )
        )
    return "".join(blocks[: start + 1] + renamed + blocks[end:])


def _file(document: dict):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("progress.json", json.dumps(document).encode())


def _null():
    import io

    return io.StringIO()


def test_a_retry_never_repeats_the_order_of_its_first_showing(demo):
    """Two seeds that happen to give the same order: the second, told to differ from the
    first, gives another."""
    question = demo.questions.exclude(keep_choice_order=True).first()
    orders: dict[tuple, str] = {}
    for number in range(200):
        order = tuple(c["id"] for c in question.choices_shown(f"seed-{number}"))
        if order in orders:
            first, second = orders[order], f"seed-{number}"
            break
        orders[order] = f"seed-{number}"
    retry = question.choices_shown(second, differ_from=first)
    assert [c["id"] for c in retry] != [c["id"] for c in question.choices_shown(first)]
    assert question.choices_shown(second, differ_from=first) == retry  # and it is stable


def test_review_keeps_its_order_on_reload_and_asks_a_miss_again_in_another(client, demo):
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=10)):
        page = client.get("/review")
        assert texts(client.get("/review")) == texts(page)
        missed = asked_question(page)
        miss_order = texts(page)
        wrong = next(c["id"] for c in missed.choices if not c["correct"])
        client.post("/review", {"token": form_token(page), "choice": wrong})
        for _ in range(7):
            page = client.get("/review")
            right = sorted(asked_question(page).correct_ids)
            client.post("/review", {"token": form_token(page), "choice": right})
        again = client.get("/review")
        assert asked_again_as_practice(again) and asked_question(again) == missed
        if not missed.keep_choice_order:
            assert texts(again) != miss_order
        shown_again = texts(again)
        client.post("/review", {"token": form_token(again), "choice": wrong})
        review = Review.objects.filter(question=missed).latest("pk")
        assert review.practice
        feedback = client.get(f"/review?reviewed={review.pk}").context["feedback"]
        assert [c["text"] for c in feedback["choices"]] == shown_again
