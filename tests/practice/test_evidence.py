"""A star lights only on evidence of memory: not on the retry that follows the shown answer."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import time_machine
from django.test import Client
from django.utils import timezone

from practice import scheduling
from practice.models import Memory, Review
from tests.practice.helpers import (
    asked_again_as_practice,
    asked_question,
    current_question,
    finish_round,
    form_token,
    practice_url,
    right_choices,
    shown_moment,
    wrong_choices,
)


def test_a_right_retry_after_a_miss_leaves_the_memory_as_the_miss_left_it(client, demo):
    finish_round(client, demo, [False] + [True] * 7)
    after_miss = Memory.objects.get(question=demo.questions.get(position=1))
    finish_round(client, demo, [True])  # the retry at the end of the round
    after_retry = Memory.objects.get(question=demo.questions.get(position=1))
    assert after_retry.memory_state == after_miss.memory_state
    assert after_retry.last_rating == scheduling.AGAIN
    retry = Review.objects.get(question=after_retry.question, round_step=8)
    assert retry.correct and retry.practice
    feedback = client.get(practice_url(demo) + "?answered=9").content.decode()
    assert "Practice: you had already seen this answer, so this one changes no star." in feedback
    sky = client.get("/sky").content.decode()
    assert "<strong>0 lit · 7 kindled</strong> · 0 due" in sky and "0 due and 1 missed" in sky
    assert f"Question 1 of {demo.title}: unlit, missed: next review in 1 day" in sky


def test_a_right_answer_the_learner_says_they_guessed_is_scheduled_as_a_lapse(demo):
    browser = Client()
    question, token = current_question(browser, practice_url(demo))
    page = browser.get(practice_url(demo)).content.decode()
    assert 'name="guessed" value="yes" data-key="g"' in page and "I guessed" in page
    browser.post(
        practice_url(demo),
        {"token": token, "choice": sorted(question.correct_ids), "guessed": "yes"},
    )
    review = Review.objects.get()
    assert review.correct and review.rating == scheduling.AGAIN and not review.star_change
    memory = Memory.objects.get()
    assert not memory.missed and memory.evidence == 0
    feedback = browser.get(practice_url(demo) + "?answered=1").content.decode()
    # In the verdict's own bar (on a phone the part that stays on screen), and said aloud.
    verdict_bar = feedback[feedback.index('class="action-bar verdict-bar"') :]
    verdict_bar = verdict_bar[: verdict_bar.index('<p class="prompt">')]
    guess_note = (
        "You said you guessed, so this answer does not count as knowing it: a guess, even a "
        "right one, leaves its star unlit"
    )
    assert guess_note in verdict_bar
    said = "Right, but you said you guessed, so it does not count as knowing it."
    assert said in feedback


def test_a_wrong_guess_is_simply_wrong(demo):
    browser = Client()
    question, token = current_question(browser, practice_url(demo))
    browser.post(
        practice_url(demo), {"token": token, "choice": wrong_choices(question), "guessed": "yes"}
    )
    assert Review.objects.get().rating == scheduling.AGAIN


def test_review_asks_each_miss_once_more_at_the_end_of_its_set_as_practice(
    client, demo, assert_max_queries
):
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=10)):
        for number in range(8):
            page = client.get("/review")
            question = asked_question(page)
            choices = right_choices(question)
            if number == 0:
                missed = question
                choices = wrong_choices(question)
            client.post("/review", {"token": form_token(page), "choice": choices})
        after_miss = Memory.objects.get(question=missed)
        # content version, session, due items, the missed item's memory (and the counter)
        with assert_max_queries(6):
            page = client.get("/review")
        assert asked_again_as_practice(page) and asked_question(page) == missed
        assert "Once more, as practice: you missed this one in this set." in page.content.decode()
        client.post("/review", {"token": form_token(page), "choice": sorted(missed.correct_ids)})
        again = Review.objects.filter(question=missed).latest("pk")
        assert again.correct and again.practice
        assert Memory.objects.get(question=missed).memory_state == after_miss.memory_state
        done = client.get("/review").content.decode()
        assert "Set done" in done and "Nothing else is due right now" in done


def test_practising_again_within_the_hour_is_practice_and_lights_nothing(client, demo):
    """Every verdict showed the right answer: a round begun straight after is practice, so a
    learner cannot turn answers just read on screen into a lit star the next day."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    kindled = {m.pk: m.memory_state for m in Memory.objects.all()}
    end = ""
    for minutes in (10, 20):  # "Practise again", twice
        with time_machine.travel(start + timedelta(minutes=minutes), tick=False):
            url = practice_url(demo) + "?new=1"
            for _ in range(8):
                question, token = current_question(client, url)
                posted = client.post(
                    practice_url(demo), {"token": token, "choice": right_choices(question)}
                )
                url = practice_url(demo)
                verdict = client.get(posted["Location"]).content.decode()
                assert (
                    "Practice: you had already seen this answer, so this one changes no star."
                    in verdict
                )
                assert "Practice: it does not count toward the star." in verdict
            end = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert (
        "This round was practice: you had seen each answer less than an hour before, so it lit "
        "and kindled no star."
    ) in end
    until = start + timedelta(minutes=20, hours=1)
    assert (
        "for an hour after each, answering the question again is practice (until "
        f"{shown_moment(until)} for the last)"
    ) in re.sub(r"<[^>]+>", "", end)
    assert {m.pk: m.memory_state for m in Memory.objects.all()} == kindled
    # A day on, one more right answer each: two that count, which lights no star.
    # (the clock running, so that each is due at its own moment, and one is due first)
    with time_machine.travel(start + timedelta(days=1, minutes=30), tick=True):
        finish_round(client, demo, [True] * 8)
        day_two = client.get(practice_url(demo) + "?summary=1").content.decode()
        sky = client.get("/sky").content.decode()
    said = re.search(
        r"No star lit or kindled this round; <strong>8 of its stars</strong> are kindled\. The "
        r"nearest to lit: 1 more right answer lights the star of “(.+?)…?”; it is due "
        r"on (.+?) UTC\.",
        html.unescape(re.sub(r"<(?!/?strong)[^>]+>", "", day_two)),
    )
    assert said, "the round's end names the kindled star nearest to lit, and when it is back"
    # named by its prompt, since the round asks in an order of its own
    nearest = Memory.objects.filter(question__lesson=demo).earliest("due")
    assert nearest.question.prompt.startswith(said[1])
    assert f"{said[2]} UTC" == shown_moment(nearest.due)
    assert "<strong>0 lit · 8 kindled</strong>" in sky


def test_a_round_that_repeats_some_answers_seen_within_the_hour_says_which_counted(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 3)  # three answered, then the round left
    with time_machine.travel(start + timedelta(minutes=15), tick=False):
        url = practice_url(demo) + "?new=1"
        for _ in range(8):
            question, token = current_question(client, url)
            client.post(practice_url(demo), {"token": token, "choice": right_choices(question)})
            url = practice_url(demo)
        end = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert "This round kindled <strong>5 stars</strong>. The nearest to lit: " in end
    assert (
        " 3 of its 8 questions were practice, answered less than an hour after you had seen "
        "the answer, so they changed no star."
    ) in end


def test_a_round_with_practice_does_not_count_its_kindled_stars_short(client, demo):
    """Two questions answered in /review minutes before are practice in the round that
    follows: its end said "6 of its stars are kindled" under a constellation of 8 kindled,
    counting only the answers that counted (learner review of stop 71)."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=3), tick=False):
        for _ in range(2):
            response = client.get("/review")
            question = asked_question(response)
            data = {"token": form_token(response), "choice": right_choices(question)}
            assert client.post("/review", data).status_code == 302
        finish_round(client, demo, [True] * 8)
        end = client.get(practice_url(demo) + "?summary=1").content.decode()
    text = re.sub(r"<[^>]+>", "", end)
    assert "2 of its 8 questions were practice" in text
    assert text.count("Right first time, as practice: ") == 2
    assert text.count("Right first time: ") == 6
    assert "of its stars" not in text
    assert "No star lit or kindled this round. The nearest to lit: 1 more right answer" in text
