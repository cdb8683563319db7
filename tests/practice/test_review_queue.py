from __future__ import annotations

import html as html_module
import re
from datetime import timedelta

import time_machine
from django.test import Client
from django.utils import timezone

from practice import scheduling
from practice.models import Memory, Review
from practice.templatetags.moments import to_the_minute
from tests.factories import make_lesson
from tests.practice.helpers import (
    REVIEW_PAGE_QUERIES,
    answer,
    asked_question,
    asked_question_or_none,
    csrf_field,
    current_question,
    finish_round,
    form_token,
    practice_url,
    rate_every_card,
    right_choices,
    shown_moment,
    shows_a_form,
)


def answer_the_round_and_seven_cards(client, demo) -> None:
    """The demo's round all right, and seven of its cards rated Good: 15 items to come due."""
    finish_round(client, demo, [True] * 8)
    cards = list(demo.flashcards.all())[:7]
    for number, _card in enumerate(cards, start=1):  # flashcards join the queue too
        token = form_token(client.get(demo.get_absolute_url() + f"/flashcards?card={number}"))
        client.post(demo.get_absolute_url() + "/flashcards", {"token": token, "rating": "3"})


def answer_a_set_right(client) -> list:
    """Eight /review items answered right (a card rated Good); the questions asked."""
    asked = []
    for _ in range(8):
        response = client.get("/review")
        token = form_token(response)
        if question := asked_question_or_none(response):
            asked.append(question)
            data = {"token": token, "choice": sorted(question.correct_ids)}
        else:
            data = {"token": token, "rating": "3"}
        assert client.post("/review", data).status_code == 302
    return asked


def test_a_new_browser_has_nothing_to_review(client, db):
    response = client.get("/review")
    assert response.status_code == 200
    assert "You have not practised anything in this browser yet" in response.content.decode()
    assert not response.cookies


def test_nothing_due_says_when_the_next_item_comes_due(client, demo):
    answer(client, demo, right=True)
    html = client.get("/review").content.decode()
    assert "Nothing is due right now" in html
    due = Memory.objects.get().due
    assert f'datetime="{to_the_minute(due).isoformat()}"' in html


def test_due_items_come_back_lowest_retrievability_first(client, demo):
    finish_round(client, demo, [True, False, True, True, True, True, True, True, True])
    # Question 2 was missed and retried: lowest stability, so least likely to be remembered.
    with time_machine.travel(timezone.now() + timedelta(days=30), tick=False):
        response = client.get("/review")
        first = asked_question(response)
        assert first.position == 2
        assert "Question 2 of" in response.content.decode()
        assert "0 of 8 done in this set · 8 items due" in response.content.decode()


def test_review_asks_every_due_item_least_likely_remembered_first(client, demo):
    """Ranked by the database for /review, as `scheduling.retrievability` ranks them: the most
    days since the last review for the stability first, whatever order the rows are in."""
    finish_round(client, demo, [True] * 8)
    now = timezone.now() + timedelta(days=30)
    memories = list(Memory.objects.order_by("pk"))
    # (days since the last review, stability): neither order is the ranking's.
    shapes = [
        (10, 2.0),
        (40, 30.0),
        (3, 0.5),
        (100, 200.0),
        (20, 5.0),
        (1, 10.0),
        (60, 6.0),
        (8, 8.0),
    ]
    for memory, (days, stability) in zip(memories, shapes, strict=True):
        memory.last_review, memory.stability = now - timedelta(days=days), stability
        memory.due = now - timedelta(hours=1)
        memory.save()
    expected = sorted(
        memories,
        key=lambda m: (scheduling.retrievability(m.memory_state, now), m.due, m.pk),
    )
    asked = []
    with time_machine.travel(now, tick=False):
        for _ in expected:
            response = client.get("/review")
            question = asked_question(response)
            asked.append(question.pk)
            data = {"token": form_token(response), "choice": sorted(question.correct_ids)}
            assert client.post("/review", data).status_code == 302
    assert asked == [memory.question_id for memory in expected]


def test_review_answers_feed_the_schedule_and_show_feedback(client, demo):
    finish_round(client, demo, [True] * 8)
    with time_machine.travel(timezone.now() + timedelta(days=30), tick=False):
        response = client.get("/review")
        question, token = asked_question(response), form_token(response)
        before = Memory.objects.get(question=question).due
        response = client.post("/review", {"token": token, "choice": sorted(question.correct_ids)})
        assert response.status_code == 302
        feedback = client.get(response["Location"]).content.decode()
        assert "Right" in feedback and "Continue" in feedback
        # Continuing empties the verdict's live region, as in a round, so the last verdict is
        # not left to be read again beside the next question or the set's end.
        following = client.get("/review", headers={"HX-Request": "true"}).content.decode()
        assert '<p id="answer-status" data-hx-swap-oob="innerHTML"></p>' in following
        assert Memory.objects.get(question=question).due > before
        assert Review.objects.filter(round__isnull=True).count() == 1


def test_a_set_that_lights_nothing_says_what_its_one_kindled_star_still_needs(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        answer(client, demo, right=True)
    with time_machine.travel(start + timedelta(days=30), tick=False):
        response = client.get("/review")
        question = asked_question(response)
        data = {"token": form_token(response), "choice": sorted(question.correct_ids)}
        client.post("/review", data)
        end = client.get("/review").content.decode()
    # Two right answers of the three a new four-choice question needs, a month apart; named,
    # since a set can hold any lesson's stars, and when it comes back for the third.
    due = Memory.objects.get(question=question).due
    assert (
        "No star lit or kindled this set; <strong>1 of its stars</strong> is kindled: 1 more "
        f"right answer lights the star of question {question.position} of "
        f"“{html_module.escape(demo.title)}”; it is due on {shown_moment(due)}."
    ) in re.sub(r"<(?!/?strong)[^>]+>", "", end)


def test_a_set_that_kindles_one_says_how_near_the_others_it_answered_came(client, demo):
    """A learner back after ten days answers all eight right: one star is newly kindled (its
    first answer was wrong), and seven are one right answer from lit. The set's end said only
    "kindled 1 star", as if the other seven answers had done nothing (outside learner review)."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False] + [True] * 7)
    with time_machine.travel(start + timedelta(days=10), tick=False):
        asked = answer_a_set_right(client)
        end = client.get("/review").content.decode()
    assert len(asked) == 8
    text = re.sub(r"<(?!/?strong)[^>]+>", "", end)
    assert "This set kindled <strong>1 star</strong>." in text
    said = re.search(
        r"<strong>8 of its stars</strong> are kindled\. The nearest to lit: 1 more right answer "
        rf"lights the star of question (\d) of “{re.escape(html_module.escape(demo.title))}”; "
        r"it is due on ([^.]+)\.",
        text,
    )
    assert said, "the set's end says where the stars it did not kindle stand"
    nearest = Memory.objects.get(question__lesson=demo, question__position=int(said[1]))
    assert said[2] == shown_moment(nearest.due)


def test_review_comes_in_sets_of_eight_and_each_says_how_many_it_holds(client, demo):
    answer_the_round_and_seven_cards(client, demo)
    with time_machine.travel(timezone.now() + timedelta(days=60), tick=False):
        answer_a_set_right(client)
        html = client.get("/review").content.decode()
        assert "That is 8 for now" in html
        assert "7 more items are due" in html and "Review 7 more</button>" in html
        client.post("/review", {"more": "1"})
        second_set = client.get("/review")
        assert shows_a_form(second_set)
        # Fewer than eight are due: the set is as long as what is due.
        assert "0 of 7 done in this set · 7 items due" in second_set.content.decode()


def test_review_page_query_count_is_fixed(client, demo, django_assert_num_queries):
    finish_round(client, demo, [True] * 8)
    with time_machine.travel(timezone.now() + timedelta(days=30), tick=False):
        client.get("/review")
        # the session, the header's counter (with the due items' count), the first due item
        with django_assert_num_queries(REVIEW_PAGE_QUERIES):
            assert shows_a_form(client.get("/review"))


def test_nothing_due_says_when_and_offers_the_next_lesson_to_learn(client, demo):
    from lessons.models import Lesson

    first = client.get("/review").content.decode()
    assert "Start here: " in first
    finish_round(client, demo, [True] * 8)
    rate_every_card(client, demo.get_absolute_url() + "/flashcards", "3")
    html = client.get("/review").content.decode()
    assert "Nothing is due right now" in html
    assert re.search(r'<time datetime="[^"]+" data-local>\w+ \d+ \w+, \d\d:\d\d UTC</time>', html)
    offered = re.search(r"Learn something new: ([^<]+)</a>", html).group(1)
    lesson = Lesson.objects.get(title=html_module.unescape(offered))
    assert lesson != demo
    assert all(needed == demo for needed in lesson.needs_first.all())


def test_the_lesson_offered_next_is_the_first_in_the_catalogue_that_is_open(client, demo):
    # First of all by title, but it needs the seed lesson first: offered only once that has
    # been started, and until then the first lesson that needs nothing.
    first_by_title = make_lesson(title="Aardvarks and Their Burrows", slug="aardvarks")
    first_by_title.needs_first.add(demo)
    html = client.get("/review").content.decode()
    assert "Start here: Message Passing and Asynchronous Work" in html
    finish_round(client, demo, [True] * 8)
    rate_every_card(client, demo.get_absolute_url() + "/flashcards", "3")
    html = client.get("/review").content.decode()
    assert "Learn something new: Aardvarks and Their Burrows" in html


def test_a_remembered_card_shows_each_showing_its_own_tokens_and_counts(demo):
    """/review's card asking a question is rendered once and remembered by what it shows: two
    browsers asked the same question each get their own tokens (their answers are accepted
    with the CSRF check on), and each answer moves the set's counts on the card."""
    browsers = [Client(), Client()]
    for browser in browsers:
        finish_round(browser, demo, [True] * 8)
        browser.handler.enforce_csrf_checks = True  # from now on, as a browser's forms are
    with time_machine.travel(timezone.now() + timedelta(days=30), tick=False):
        pages = [browser.get("/review") for browser in browsers]
        assert asked_question(pages[0]) == asked_question(pages[1])
        assert form_token(pages[0]) != form_token(pages[1])
        for browser, page in zip(browsers, pages, strict=True):
            assert "0 of 8 done in this set · 8 items due" in page.content.decode()
            question = asked_question(page)
            response = browser.post(
                "/review",
                {
                    "token": form_token(page),
                    "choice": sorted(question.correct_ids),
                    "csrfmiddlewaretoken": csrf_field(page),
                },
            )
            assert response.status_code == 302
            again = browser.get("/review")
            assert "1 of 8 done in this set · 7 items due" in again.content.decode()
            assert asked_question(again) != question
    assert Review.objects.filter(practice=False).count() == 2 * 8 + 2


def test_the_review_card_shows_an_edit_to_its_lesson_at_once(client, demo):
    """The due item's lesson and question come from the page data kept for the lesson's pages,
    which an edit renews: the next /review shows the lesson's new title and the new prompt."""
    finish_round(client, demo, [True] * 8)
    with time_machine.travel(timezone.now() + timedelta(days=30), tick=False):
        question = asked_question(client.get("/review"))
        demo.title = "A freshly edited title"
        demo.save()
        question.prompt = "A freshly edited prompt?"
        question.save()
        html = client.get("/review").content.decode()
        assert f"Question {question.position} of <a href=" in html
        assert ">A freshly edited title</a>" in html
        assert "A freshly edited prompt?" in html


def test_a_set_of_questions_and_flashcards_ends_on_the_rule_for_both(client, demo):
    """A question missed in its round and a card rated Again come back together; answered
    right and rated Good, each is kindled, and the set's end tells what lighting them takes
    for both kinds."""
    finish_round(client, demo, [False] + [True] * 7 + [False])
    cards = demo.get_absolute_url() + "/flashcards"
    client.post(cards, {"token": form_token(client.get(cards)), "rating": "1"})
    with time_machine.travel(timezone.now() + timedelta(days=1, hours=1), tick=False):
        kinds = set()
        while shows_a_form(page := client.get("/review")):
            if question := asked_question_or_none(page):
                data = {"token": form_token(page), "choice": sorted(question.correct_ids)}
                kinds.add("question")
            else:
                data = {"token": form_token(page), "rating": "3"}
                kinds.add("flashcard")
            assert client.post("/review", data).status_code == 302
        end = page.content.decode()
    assert kinds == {"question", "flashcard"}
    assert "This set kindled <strong>2 stars</strong>." in end
    assert (
        "A kindled star lights after more right answers or ratings of Hard or better in a "
        "row, spread over a day or more, so that a lucky guess is unlikely: a new question "
        "with four choices needs 3 in all, its first included, and a new flashcard 4, and "
        "each wrong answer or Again before it lights adds up to two more."
    ) in end


def test_a_due_item_whose_answer_was_just_seen_waits_out_the_hour(client, demo):
    """Practised from an old round's end, a due question's answer is on screen: /review does
    not ask it (its answer would be practice, and the same form would come back for ever)
    but says when it will, and then asks it and schedules the answer."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False] + [True] * 7 + [False])
    day_two = start + timedelta(days=1, hours=1)
    with time_machine.travel(day_two, tick=False):
        page = client.get(practice_url(demo) + "?missed=1")
        question = asked_question(page)
        client.post(
            practice_url(demo),
            {"token": form_token(page), "choice": right_choices(question), "n": 1},
        )
        waiting = client.get("/review")
    assert not shows_a_form(waiting)
    text = re.sub(r"<[^>]+>", "", html_module.unescape(waiting.content.decode()))
    assert "1 item is due, but you saw its answer less than an hour ago" in text
    # from the next whole minute after the hour, so that it is never shown too soon
    assert f"back here from {shown_moment(day_two + timedelta(hours=1))}" in text
    with time_machine.travel(day_two + timedelta(minutes=61), tick=False):
        asked, token = current_question(client, "/review")
        client.post("/review", {"token": token, "choice": right_choices(asked)})
    assert asked == question
    assert not Review.objects.filter(question=question).latest("reviewed_at").practice


def test_a_full_set_counts_only_the_due_items_it_can_ask_next(client, demo):
    """One due question was answered ten minutes ago (on another page, as practice): the end
    of a full set does not offer it among the items to review next."""
    answer_the_round_and_seven_cards(client, demo)
    later = timezone.now() + timedelta(days=60)
    seen = Memory.objects.filter(question__isnull=False).order_by("pk").last()
    first_review = Review.objects.filter(question=seen.question).get()
    Review.objects.create(
        learner=first_review.learner,
        lesson=demo,
        question=seen.question,
        attempt="seen-ten-minutes-ago",
        rating=scheduling.GOOD,
        reviewed_at=later - timedelta(minutes=10),
        answer=first_review.answer,
        correct=True,
        practice=True,
    )
    with time_machine.travel(later, tick=False):
        assert seen.question not in answer_a_set_right(client)
        html = client.get("/review").content.decode()
    assert "That is 8 for now" in html
    assert "6 more items are due" in html and "Review 6 more</button>" in html
