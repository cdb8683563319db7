"""Truly concurrent submissions on PostgreSQL: the database's constraints decide, not timing."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.test import Client

from lessons.models import Lesson
from practice.models import Learner, Memory, Review, Round
from tests.practice import helpers
from tests.practice.helpers import answer, current_question, form_token, practice_url, wrong_choices

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 8


def post_together(session_cookie: str, url: str, forms: dict | list[dict]) -> list:
    """The forms posted at one instant (one form: THREADS times)."""
    forms = forms if isinstance(forms, list) else [forms] * THREADS
    return helpers.post_together(session_cookie, url, forms)


@pytest.fixture
def seed(transactional_db) -> Lesson:
    import io

    from django.core.management import call_command

    call_command("load_demo", stdout=io.StringIO())
    return Lesson.objects.get(public_id="mt__e-JwIxHek")


def test_concurrent_double_submit_records_one_review(seed):
    client = Client()
    answer(client, seed, right=True)
    question, token = current_question(client, practice_url(seed))
    responses = post_together(
        client.cookies["sessionid"].value,
        practice_url(seed),
        {"token": token, "choice": sorted(question.correct_ids)},
    )
    assert [r.status_code for r in responses] == [302] * THREADS
    # One request records the answer; the others are told it was answered already.
    locations = sorted(r["Location"] for r in responses)
    assert locations == [practice_url(seed) + "?answered=2#feedback"] + [
        practice_url(seed) + "?q=2#feedback"
    ] * (THREADS - 1)
    assert Review.objects.filter(question=question).count() == 1
    assert Review.objects.count() == 2
    assert Memory.objects.filter(question=question).count() == 1


def test_concurrent_first_answers_of_a_new_round_make_one_round(seed):
    client = Client()
    answer(client, seed, right=True)  # the learner exists; now start a second round at once
    for _ in range(7):
        answer(client, seed, right=True)
    question, token = current_question(client, practice_url(seed) + "?new=1")
    responses = post_together(
        client.cookies["sessionid"].value,
        practice_url(seed),
        {"token": token, "choice": sorted(question.correct_ids)},
    )
    assert [r.status_code for r in responses] == [302] * THREADS
    assert Round.objects.count() == 2
    assert Review.objects.count() == 9


def test_a_new_card_rated_in_several_tabs_at_once_counts_once_without_an_error(seed):
    client = Client()
    answer(client, seed, right=True)
    url = seed.get_absolute_url() + "/flashcards"
    tokens = [form_token(client.get(url)) for _ in range(THREADS)]
    responses = post_together(
        client.cookies["sessionid"].value, url, [{"token": t, "rating": "3"} for t in tokens]
    )
    assert [r.status_code for r in responses] == [302] * THREADS
    card = seed.flashcards.first()
    assert Review.objects.filter(flashcard=card).count() == 1
    assert Memory.objects.filter(flashcard=card).count() == 1


def rate_in_several_tabs_at_once(seed, *, rated_ago: timedelta) -> tuple[Memory, Memory]:
    """Rate the seed's first card, move that rating `rated_ago` into the past, then rate it in
    several tabs at once; the card's memory before and after the tabs."""
    client = Client()
    answer(client, seed, right=True)
    url = seed.get_absolute_url() + "/flashcards"
    client.post(url, {"token": form_token(client.get(url)), "rating": "3"})
    card = seed.flashcards.first()
    Review.objects.filter(flashcard=card).update(reviewed_at=F("reviewed_at") - rated_ago)
    Memory.objects.filter(flashcard=card).update(last_review=F("last_review") - rated_ago)
    rated_once = Memory.objects.get(flashcard=card)
    # card 1 again, in each tab (the set's own address would take it up at card 2)
    tokens = [form_token(client.get(f"{url}?card=1")) for _ in range(THREADS)]
    responses = post_together(
        client.cookies["sessionid"].value, url, [{"token": t, "rating": "1"} for t in tokens]
    )
    assert [r.status_code for r in responses] == [302] * THREADS
    assert Review.objects.filter(flashcard=card).count() == 2
    return rated_once, Memory.objects.get(flashcard=card)


def test_a_card_rated_before_and_rated_again_in_several_tabs_at_once_counts_once(seed):
    # The tabs' ratings queue on the learner's and the card's locks: the first is written, and
    # each of the others then finds the card reviewed since its form was shown, the same sitting.
    rated_once, memory = rate_in_several_tabs_at_once(seed, rated_ago=timedelta(hours=2))
    assert memory.last_review > rated_once.last_review and memory.last_rating == 1


def test_a_card_rated_again_within_the_hour_in_several_tabs_is_practised_once(seed):
    # Its answer was seen minutes ago: the first tab's rating is practice and moves nothing,
    # and the others find it, though it left the memory as it was.
    rated_once, memory = rate_in_several_tabs_at_once(seed, rated_ago=timedelta(minutes=5))
    assert memory.memory_state == rated_once.memory_state
    assert Review.objects.filter(flashcard__isnull=False).latest("reviewed_at").practice


def test_a_new_browsers_first_answer_sent_at_once_makes_one_learner(seed):
    first = Client()
    question, token = current_question(first, practice_url(seed))
    csrf = first.cookies["csrftoken"].value
    barrier = threading.Barrier(THREADS)
    statuses: list[int] = []

    def worker() -> None:
        browser = Client()
        browser.cookies["csrftoken"] = csrf
        try:
            barrier.wait(timeout=10)
            data = {"token": token, "choice": sorted(question.correct_ids)}
            statuses.append(browser.post(practice_url(seed), data).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert statuses == [302] * THREADS
    assert Learner.objects.count() == 1
    assert Review.objects.count() == 1
    assert Round.objects.count() == 1


def test_forget_racing_the_same_browsers_other_requests_always_erases_it(seed):
    """An answer, a card rated again, a transfer code and an import sent at the instant
    "Forget everything" is: the learner is erased every time, and the others get a page or a
    clean refusal, not 500 (nor a deadlock between the forgetting and an answer)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.practice.helpers import exported

    for _ in range(10):
        browser = Client()
        answer(browser, seed, right=True)
        cards = seed.get_absolute_url() + "/flashcards"
        browser.post(cards, {"token": form_token(browser.get(cards)), "rating": "3"})
        saved = json.dumps(exported(browser)).encode()
        _, token = current_question(browser, practice_url(seed))
        wrong = wrong_choices(Lesson.objects.get(pk=seed.pk).questions.all()[1])
        requests = [
            ("/progress/forget", {"confirm": "yes"}),
            (practice_url(seed), {"token": token, "choice": wrong}),
            (cards, {"token": form_token(browser.get(cards)), "rating": "1"}),
            ("/progress/transfer", {}),
            ("/progress/import", {"file": SimpleUploadedFile("p.json", saved)}),
        ]
        statuses = post_each_together(browser.cookies["sessionid"].value, requests)
        assert statuses[0] == 302, statuses
        assert all(status < 500 for status in statuses), statuses
        assert not Learner.objects.exists(), statuses


def post_each_together(session_cookie: str, requests: list[tuple[str, dict]]) -> list[int]:
    barrier = threading.Barrier(len(requests))
    statuses: dict[int, int] = {}

    def worker(number: int, url: str, data: dict) -> None:
        browser = Client()
        browser.cookies["sessionid"] = session_cookie
        try:
            barrier.wait(timeout=10)
            statuses[number] = browser.post(url, data).status_code
        finally:
            connection.close()

    threads = [
        threading.Thread(target=worker, args=(number, url, data))
        for number, (url, data) in enumerate(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return [statuses.get(number, 0) for number in range(len(requests))]
