"""Odd inputs and odd timings in a learner's requests never become a 500 or a double count."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from practice.models import Learner, Review, Round
from tests.conftest import SEED_PATH
from tests.practice.helpers import (
    answer,
    asked_question,
    current_question,
    finish_round,
    form_token,
    practice_url,
)


def test_a_round_token_is_refused_by_the_review_and_the_round_carries_on(client, demo):
    question, token = current_question(client, practice_url(demo))
    data = {"token": token, "choice": sorted(question.correct_ids)}
    response = client.post("/review", data)
    assert response.status_code == 400
    assert "belongs to a practice round" in response.content.decode()
    assert client.post(practice_url(demo), data).status_code == 302
    assert Review.objects.count() == 1 and Round.objects.count() == 1


def test_a_new_browsers_first_answer_sent_twice_makes_one_learner_and_one_review(demo):
    first = Client()
    question, token = current_question(first, practice_url(demo))
    csrf = first.cookies["csrftoken"].value
    second = Client()  # the same browser's second request, before any session cookie came back
    second.cookies["csrftoken"] = csrf
    data = {"token": token, "choice": sorted(question.correct_ids)}
    assert first.post(practice_url(demo), data).status_code == 302
    assert second.post(practice_url(demo), data).status_code == 302
    assert Learner.objects.count() == 1
    assert Review.objects.count() == 1
    assert first.session["learner"] == second.session["learner"]


def test_a_planted_csrf_cookie_does_not_join_a_new_browsers_learner_from_elsewhere(demo):
    """A page on a sibling domain can set a browser's CSRF cookie; answering with the same value
    from another address within the minute joined the victim's new learner (security review)."""
    victim = Client(REMOTE_ADDR="203.0.113.7")
    question, token = current_question(victim, practice_url(demo))
    data = {"token": token, "choice": sorted(question.correct_ids)}
    assert victim.post(practice_url(demo), data).status_code == 302
    planter = Client(REMOTE_ADDR="198.51.100.9")
    planter.cookies["csrftoken"] = victim.cookies["csrftoken"].value
    _, other_token = current_question(planter, practice_url(demo))
    planter.post(practice_url(demo), {"token": other_token, "choice": data["choice"]})
    assert planter.session["learner"] != victim.session["learner"]
    assert Learner.objects.count() == 2


@pytest.mark.parametrize("value", ["²", "٣", "9" * 5000, "-1", "1e3", ""])
def test_odd_numbers_in_addresses_are_ignored_not_errors(client, demo, value):
    answer(client, demo, right=True)
    for path in ("/practice?answered=", "/flashcards?card="):
        assert client.get(SEED_PATH + path + value).status_code == 200
    assert client.get("/review?reviewed=" + value).status_code == 200


def test_an_arabic_indic_digit_is_not_a_rating(client, demo):
    url = demo.get_absolute_url() + "/flashcards"
    token = form_token(client.get(url))
    assert client.post(url, {"token": token, "rating": "٣"}).status_code == 400


def test_htmx_history_restore_gets_the_whole_page(client, demo):
    headers = {"HX-Request": "true", "HX-History-Restore-Request": "true"}
    html = client.get(practice_url(demo), headers=headers).content.decode()
    assert "<html" in html and "<h1 " in html
    assert f'<figure id="constellation-{demo.public_id}"' in html  # the strip's stars too


def test_head_requests_are_answered(client, demo):
    for path in ("/", SEED_PATH, SEED_PATH + ".md", "/sky", "/llms.txt", "/robots.txt"):
        assert client.head(path).status_code == 200, path


def test_a_stray_trailing_slash_redirects_and_unknown_paths_stay_404(client, demo):
    response = client.get("/review/?x=1")
    assert response.status_code == 301 and response["Location"] == "/review?x=1"
    assert client.get(SEED_PATH + "/")["Location"] == SEED_PATH
    assert client.get("/%2F%2Fevil.example/").status_code == 404
    assert client.get("/nothing-here/").status_code == 404


def test_an_active_learners_session_is_renewed(client, demo):
    answer(client, demo, right=True)
    with time_machine.travel(timezone.now() + timedelta(days=300), tick=False):
        response = answer(client, demo, right=True)
        assert response.cookies["sessionid"]["max-age"] >= 60 * 60 * 24 * 365


def test_a_set_of_eight_reviews_starts_afresh_after_an_hour(client, demo):
    finish_round(client, demo, [True] * 8)
    later = timezone.now() + timedelta(days=30)
    with time_machine.travel(later, tick=False):
        for _ in range(8):
            response = client.get("/review")
            question = asked_question(response)
            client.post(
                "/review",
                {"token": form_token(response), "choice": sorted(question.correct_ids)},
            )
    with time_machine.travel(later + timedelta(hours=2), tick=False):
        html = client.get("/review").content.decode()
        assert "That is 8 for now" not in html


def test_learner_pages_are_not_cached_by_anyone(client, demo):
    answer(client, demo, right=True)
    for path in (practice_url(demo), "/review", "/sky", "/progress", "/progress/export"):
        assert "no-store" in client.get(path)["Cache-Control"], path
    # Pages that read the same to every visitor but show a learner their own stars and
    # "Continue" are private for a learner, even behind a cache that ignores Vary.
    for path in ("/", SEED_PATH, SEED_PATH + ".md", "/learn/computing/", "/search?q=cache"):
        response = client.get(path)
        assert "Cookie" in response["Vary"] and response["Cache-Control"] == "private", path
        assert not Client().get(path).has_header("Cache-Control"), path
