from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from lessons.models import Lesson
from practice import services
from practice.models import Learner, Memory, Review, Round, RoundProgress
from practice.selectors.stars import day_words
from practice.templatetags.moments import to_the_minute
from tests.conftest import SEED_PATH
from tests.factories import make_lesson
from tests.practice.helpers import (
    QUESTION_PAGE_QUERIES,
    answer,
    asked_question,
    counter_text,
    current_question,
    exported,
    finish_round,
    form_token,
    practice_url,
    right_choices,
    wrong_choices,
)
from tests.test_budgets import ANSWER_QUERIES


def test_the_lesson_page_leads_to_the_round(client, demo):
    html = client.get(SEED_PATH).content.decode()
    assert f'href="{SEED_PATH}/practice"' in html


def test_the_round_starts_with_question_one_of_eight_and_stores_nothing(client, demo):
    response = client.get(practice_url(demo))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Question 1 of 8" in html
    assert "0 of 8 answered" in html
    assert escape(demo.questions.get(position=1).prompt) in html
    assert Learner.objects.count() == 0
    assert "sessionid" not in response.cookies


def test_a_right_answer_is_explained_at_once_and_lights_the_item(client, demo):
    response = answer(client, demo, right=True)
    assert response.status_code == 302
    assert response["Location"] == practice_url(demo) + "?answered=1#feedback"
    feedback = client.get(response["Location"]).content.decode()
    question = demo.questions.get(position=1)
    assert "Right" in feedback
    assert question.explanation_html in feedback
    assert "1 of 8 answered" in feedback
    memory = Memory.objects.get()
    assert memory.question == question and memory.last_rating == 3
    review = Review.objects.get()
    assert (
        review.correct is True
        and review.rating == 3
        and review.answer == right_choices(question)[0]
    )
    assert review.duration_ms is not None


def test_a_wrong_answer_shows_why_that_choice_is_wrong(client, demo):
    question = demo.questions.get(position=1)
    picked = wrong_choices(question)[0]
    why = next(c["explanation"] for c in question.choices if c["id"] == picked)
    response = answer(client, demo, right=False)
    feedback = client.get(response["Location"]).content.decode()
    assert "Not quite" in feedback
    assert escape(why) in feedback
    assert "Your answer" in feedback and "Correct answer" in feedback
    assert "You will meet this question again at the end of the round, as practice." in feedback
    assert Review.objects.get().rating == 1


def test_a_missed_question_comes_back_once_at_the_end(client, demo):
    pattern = [False] + [True] * 7
    for right in pattern:
        answer(client, demo, right=right)
    question, _ = current_question(client, practice_url(demo))
    assert question.position == 1
    page = client.get(practice_url(demo)).content.decode()
    assert "Once more: a question you missed" in page and "8 of 8 answered · 1 to retry" in page
    response = answer(client, demo, right=False)  # missed again: it does not come back again
    assert "See your results" in client.get(response["Location"]).content.decode()
    summary = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert "Round complete" in summary
    assert "<strong>7 of 8</strong> right the first time" in summary
    assert Round.objects.get().finished_at is not None
    assert Review.objects.count() == 9


def test_a_finished_round_can_be_practised_again(client, demo):
    for _ in range(8):
        answer(client, demo, right=True)
    assert "Round complete" in client.get(practice_url(demo) + "?summary=1").content.decode()
    # Coming back later ("Practise the 8 questions") begins a new round rather than the old summary.
    question, _ = current_question(client, practice_url(demo))
    assert question.position == 1
    answer(client, demo, right=True)
    assert Round.objects.count() == 2
    assert "Question 2 of 8" in client.get(practice_url(demo)).content.decode()


def test_reloading_mid_round_resumes_where_the_learner_was(client, demo):
    for _ in range(3):
        answer(client, demo, right=True)
    html = client.get(practice_url(demo)).content.decode()
    assert "Question 4 of 8" in html and "3 of 8 answered" in html


def test_a_round_left_for_over_a_day_gives_way_to_a_new_one(client, demo):
    """Its answers count; taking it up again a month later would ask its last questions in an
    order fixed for that day, and a retry of a miss long since scheduled anew."""
    answer(client, demo, right=True)
    answer(client, demo, right=False)
    with time_machine.travel(timezone.now() + timedelta(hours=20)):
        html = client.get(practice_url(demo)).content.decode()
        assert "Question 3 of 8" in html and "2 of 8 answered" in html
    with time_machine.travel(timezone.now() + timedelta(days=30)):
        html = client.get(practice_url(demo)).content.decode()
        assert "Question 1 of 8" in html and "to retry" not in html
        answer(client, demo, right=True)
        assert "Question 2 of 8" in client.get(practice_url(demo)).content.decode()
    assert Round.objects.count() == 2
    assert Review.objects.filter(practice=False).count() == 3


def test_an_old_tab_of_a_left_round_neither_answers_into_it_nor_shows_its_promises(client, demo):
    """A tab reloaded on question 3 just before the round is left is sent just after: the
    answer is refused, said why, and the addresses of the left round's answers lead to the new
    round, not to "you will meet this question again at the end of the round"."""
    start = timezone.now()
    answer(client, demo, right=True)
    answer(client, demo, right=False)
    with time_machine.travel(start + timedelta(hours=23)):
        question, token = current_question(client, practice_url(demo))
        assert question.position == 3
    with time_machine.travel(start + timedelta(hours=25)):
        choices = right_choices(question)
        stale = client.post(practice_url(demo), {"token": token, "choice": choices})
        assert stale.status_code == 400
        assert "This round was left unfinished over a day ago" in stale.content.decode()
        for address in ("?answered=2", "?q=2"):
            response = client.get(practice_url(demo) + address)
            assert response.status_code == 302 and response["Location"] == practice_url(demo)
    assert Review.objects.count() == 2


def test_htmx_answer_swaps_only_the_card_with_feedback(client, demo):
    response = answer(client, demo, right=True, htmx=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert html.lstrip().startswith('<section id="practice-card"')
    assert "Right" in html and "Continue" in html
    assert response["HX-Push-Url"] == practice_url(demo) + "?answered=1"
    assert "HX-Request" in response["Vary"]


def test_htmx_next_question_is_a_fragment(client, demo):
    answer(client, demo, right=True, htmx=True)
    response = client.get(practice_url(demo), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert "<html" not in html and "Question 2 of 8" in html


def test_a_second_browser_sees_none_of_the_first_ones_progress(client, demo):
    for _ in range(3):
        answer(client, demo, right=True)
    other = Client()
    html = other.get(practice_url(demo)).content.decode()
    assert "Question 1 of 8" in html
    assert exported(other)["items"] == []


def test_the_learner_is_a_random_id_in_the_session_not_the_session_key(client, demo):
    answer(client, demo, right=True)
    learner = Learner.objects.get()
    assert client.session["learner"] == learner.public_id
    assert learner.public_id != client.session.session_key
    assert len(learner.public_id) >= 20


def test_the_session_cookie_lasts_long(client, demo):
    response = answer(client, demo, right=True)
    assert response.cookies["sessionid"]["max-age"] >= 60 * 60 * 24 * 365


def test_the_same_submission_twice_records_one_review_and_shows_the_same_feedback(client, demo):
    question, token = current_question(client, practice_url(demo))
    data = {"token": token, "choice": sorted(question.correct_ids)}
    first = client.post(practice_url(demo), data)
    second = client.post(practice_url(demo), data)
    assert first.status_code == second.status_code == 302
    assert first["Location"].endswith("?answered=1#feedback")
    assert second["Location"].endswith("?q=1#feedback")  # the same answer, shown as given then
    assert Review.objects.count() == 1
    assert Memory.objects.count() == 1
    again = client.get(second["Location"])
    assert again.context["feedback"]["review"] == first_review(client)
    assert "You answered this question already" in again.content.decode()


def first_review(client):
    return Review.objects.get(learner__public_id=client.session["learner"])


def test_a_second_tab_answering_a_question_the_first_tab_answered_is_told_so(client, demo):
    answer(client, demo, right=True)
    first_tab, second_tab = client.get(practice_url(demo)), client.get(practice_url(demo))
    question = asked_question(first_tab)
    assert asked_question(second_tab) == question  # both show question 2
    client.post(
        practice_url(demo), {"token": form_token(first_tab), "choice": right_choices(question)}
    )
    late = client.post(
        practice_url(demo),
        {"token": form_token(second_tab), "choice": wrong_choices(question)},
        headers={"HX-Request": "true"},
    )
    html = late.content.decode()
    assert "You answered this question already" in html and "✓</span> Right" in html
    # The first tab's answer kindled the star; the second tab does not announce it again.
    assert Review.objects.get(question=question).star_change == "kindled"
    assert "Star kindled" not in html
    assert Review.objects.filter(question=question).count() == 1


def test_two_tabs_on_the_same_question_record_one_review(client, demo):
    answer(client, demo, right=True)  # makes the learner and the round
    question, token_b = current_question(client, practice_url(demo))
    _, token_c = current_question(client, practice_url(demo))
    data = {"choice": sorted(question.correct_ids)}
    client.post(practice_url(demo), data | {"token": token_b})
    client.post(practice_url(demo), data | {"token": token_c})
    assert Review.objects.count() == 2


def test_a_page_from_the_back_button_is_stale_and_stores_nothing(client, demo):
    old_question, old_token = current_question(client, practice_url(demo))
    client.post(
        practice_url(demo), {"token": old_token, "choice": sorted(old_question.correct_ids)}
    )
    next_question, next_token = current_question(client, practice_url(demo))
    client.post(practice_url(demo), {"token": next_token, "choice": wrong_choices(next_question)})
    # Another answer on the first question's old page is the same attempt: recorded once.
    response = client.post(
        practice_url(demo), {"token": old_token, "choice": wrong_choices(old_question)}
    )
    assert response.status_code == 302
    assert Review.objects.count() == 2


def test_round_pages_have_a_fixed_number_of_queries(client, demo, django_assert_num_queries):
    answer(client, demo, right=True)
    # the lesson and its questions come from the cache
    with django_assert_num_queries(QUESTION_PAGE_QUERIES):
        client.get(practice_url(demo))
    for _ in range(5):
        answer(client, demo, right=False)
    with django_assert_num_queries(QUESTION_PAGE_QUERIES):
        client.get(practice_url(demo))


def test_a_practice_page_shows_each_answer_of_its_round_in_order(client, demo):
    """The round, the stars and the header's counter come in one query; each answer is still
    found at its own number, and the counter and the constellation match the lesson page's."""
    asked = []
    for right in (True, False, True, False, True):
        asked.append((current_question(client, practice_url(demo))[0], right))
        answer(client, demo, right=right)
    for number, (question, right) in enumerate(asked, start=1):
        feedback = client.get(practice_url(demo) + f"?answered={number}").context["feedback"]
        assert (feedback["question"], feedback["review"].correct) == (question, right)
    practice_page = client.get(practice_url(demo)).content.decode()
    assert "Question 6 of 8" in practice_page
    assert counter_text(practice_page) == "Your sky: 3 kindled"

    def stars(html: str) -> list[str]:
        return re.findall(r"<title>((?:Question|Flashcard) \d+ of [^<]+)</title>", html)

    lesson_page = client.get(SEED_PATH).content.decode()
    assert sum(": kindled" in star for star in stars(practice_page)) == 3
    assert stars(practice_page) == stars(lesson_page)


def test_answer_post_query_count_does_not_grow_with_history(client, demo, assert_max_queries):
    answer(client, demo, right=True)
    question, token = current_question(client, practice_url(demo))
    with assert_max_queries(ANSWER_QUERIES):
        client.post(practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)})
    for _ in range(5):
        answer(client, demo, right=True)
    question, token = current_question(client, practice_url(demo))
    # the last answer also marks the round finished
    with assert_max_queries(ANSWER_QUERIES + 1):
        client.post(practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)})


def synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('synchronous_commit')")
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_an_answers_commit_waits_for_the_disk_as_every_write_does(client, demo):
    """An acknowledged answer is never lost: nothing an answer runs turns PostgreSQL's
    synchronous commit off, for its transaction (here the test's) or its connection."""
    client.get(practice_url(demo))
    server_default = synchronous_commit()
    assert server_default == "on"
    assert answer(client, demo, right=True).status_code == 302
    assert synchronous_commit() == server_default
    assert Review.objects.filter(learner__isnull=False).count() == 1


def test_a_rounds_key_finds_its_round_in_its_lesson_only(client, demo):
    """A round is looked up by its key, which is unique to the learner, and its lesson is
    checked beside it: the key of one lesson's round names no round of another lesson."""
    answer(client, demo, right=True)
    round_ = Round.objects.get()
    other = Lesson.objects.exclude(pk=round_.lesson_id).first()

    for lesson, found in ((demo, round_), (other, None)):
        questions = list(lesson.questions.order_by("position"))
        progress = RoundProgress.load(
            learner=round_.learner, lesson=lesson, questions=questions, key=round_.key
        )
        assert progress.round == found
        assert len(progress.reviews) == (1 if found else 0)


def test_a_draft_lessons_round_is_hidden(client, db):
    lesson = make_lesson(status="draft")
    assert client.get(practice_url(lesson)).status_code == 404


def test_practice_wrong_slug_redirects(client, demo):
    response = client.get("/learn/computing/old-mt__e-JwIxHek/practice")
    assert response.status_code == 301
    assert response["Location"] == SEED_PATH + "/practice"


@pytest.mark.parametrize(
    ("pattern", "score"),
    [([True] * 8, 8), ([False] * 8 + [True] * 8, 0), ([True, False] * 4 + [True] * 4, 4)],
)
def test_every_round_ends_in_a_summary(client, demo, pattern, score):
    for right in pattern:
        assert answer(client, demo, right=right).status_code == 302
    html = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert "Round complete" in html
    assert f"<strong>{score} of 8</strong> right the first time" in html


def test_an_answered_questions_address_shows_its_answer_not_a_fresh_form(client, demo):
    """Back to question 1 (its address, ?q=1) after answering it: its answer, said to be
    an earlier one, and the way on; never a form that looks new."""
    answer(client, demo, right=True)
    page = client.get(practice_url(demo) + "?q=1")
    html = page.content.decode()
    assert page.context["feedback"]["review"].round_step == 0
    assert "You answered this question already" in html
    assert 'href="' + practice_url(demo) + '?q=2"' in html  # Continue goes to question 2
    assert "Question 2 of 8" in client.get(practice_url(demo) + "?q=2").content.decode()


def test_a_form_sent_again_from_an_earlier_page_says_it_was_answered(client, demo):
    first, token = current_question(client, practice_url(demo))
    client.post(practice_url(demo), {"token": token, "choice": right_choices(first)})
    answer(client, demo, right=True)
    again = client.post(practice_url(demo), {"token": token, "choice": wrong_choices(first)})
    assert again["Location"].endswith("?q=1#feedback")
    html = client.get(again["Location"]).content.decode()
    assert "You answered this question already" in html and "✓" in html
    htmx = client.post(
        practice_url(demo),
        {"token": token, "choice": wrong_choices(first)},
        headers={"HX-Request": "true"},
    )
    assert "You answered this question already" in htmx.content.decode()
    # The live region says so too: it said "Right." to a screen reader for the wrong pick just
    # sent, with no word of why (outside learner review).
    status = re.search(r'<p id="answer-status"[^>]*>(.*?)</p>', htmx.content.decode(), re.S)
    assert status and status[1].startswith(
        "You answered this question already, so this is the answer you gave then, which was right."
    )
    assert Review.objects.count() == 2


def test_a_wrong_answer_sent_again_from_a_second_tab_is_told_wrong(client, demo):
    first, token = current_question(client, practice_url(demo))
    client.post(practice_url(demo), {"token": token, "choice": wrong_choices(first)})
    again = client.post(
        practice_url(demo),
        {"token": token, "choice": right_choices(first)},
        headers={"HX-Request": "true"},
    )
    status = re.search(r'<p id="answer-status"[^>]*>(.*?)</p>', again.content.decode(), re.S)
    assert status and status[1].startswith(
        "You answered this question already, so this is the answer you gave then, which was "
        "not quite right. The answer is"
    )


def test_after_a_round_the_missed_ones_can_be_practised_without_scheduling(client, demo):
    finish_round(client, demo, [False, True, False] + [True] * 5 + [True, False])
    summary = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert "Practise the ones I missed" in summary
    memories = {m.question_id: m.memory_state for m in Memory.objects.all()}
    reviews = Review.objects.count()
    url = practice_url(demo) + "?missed=1"
    for number, right in ((1, True), (2, False)):
        page = client.get(url)
        question = asked_question(page)
        assert question.position == (1, 3)[number - 1]
        html = page.content.decode()
        assert f"Practice: missed question {number} of 2" in html
        assert "8 of 8 answered · practising the 2 you missed" in html  # the strip says so
        choice = right_choices(question) if right else wrong_choices(question)
        response = client.post(
            practice_url(demo), {"token": form_token(page), "choice": choice, "n": number}
        )
        assert response.status_code == 302
        feedback = client.get(response["Location"])
        assert feedback.context["feedback"]["review"].practice
        continue_to = re.search(r'href="([^"]*missed=1&amp;n=\d)"', feedback.content.decode())
        url = continue_to.group(1).replace("&amp;", "&")
    done = client.get(url).content.decode()
    assert "The ones you missed, practised" in done
    assert "You answered <strong>1 of 2</strong> right this time." in done  # how they went
    assert Review.objects.count() == reviews + 2
    assert {m.question_id: m.memory_state for m in Memory.objects.all()} == memories


def test_a_missed_one_practised_is_announced_like_any_answer(client, demo):
    """The live region says the verdict and how far the practice of the missed ones is, in
    the answer's response and on a reload of its address."""
    finish_round(client, demo, [False, False] + [True] * 6 + [True, True])
    page = client.get(practice_url(demo) + "?missed=1")
    question = asked_question(page)
    response = client.post(
        practice_url(demo),
        {"token": form_token(page), "choice": wrong_choices(question), "n": 1},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    status = re.search(r'<p id="answer-status"[^>]*data-hx-swap-oob[^>]*>(.*?)</p>', html)
    assert status and status.group(1).startswith("Not quite. The answer is")
    assert status.group(1).endswith(" Missed question 1 of 2 practised.")
    assert 'id="round-progress"' not in html  # the round's own strip is left as it was
    reloaded = client.get(response["HX-Push-Url"]).content.decode()
    status = re.search(r'<p id="answer-status"[^>]*>(.*?)</p>', reloaded)
    assert status and status.group(1).endswith(" Missed question 1 of 2 practised.")


def test_the_star_an_answer_kindles_glows_beside_the_verdict(client, demo):
    right = client.get(answer(client, demo, right=True)["Location"]).content.decode()
    assert "Star kindled</p>" in right
    wrong = client.get(answer(client, demo, right=False)["Location"]).content.decode()
    assert 'class="reward reward-' not in wrong
    htmx = answer(client, demo, right=True, htmx=True).content.decode()
    assert "Star kindled</p>" in htmx
    assert 'id="round-progress"' in htmx and "3 of 8 answered · 1 to retry" in htmx


def test_the_round_ends_on_its_constellation_with_what_it_kindled(client, demo):
    finish_round(client, demo, [True, False] + [True] * 6 + [True])
    html = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert f'id="constellation-{demo.public_id}-end"' in html
    assert "This round kindled <strong>7 stars</strong>." in html
    # Days are UTC's until the page's script counts them by the learner's own (and says so).
    back = re.search(
        r"Coming back<span data-utc> \(days counted in UTC\)</span>: ([^<]+)\.</p>", html
    )
    back = back.group(1)
    assert sum(int(part.split()[0]) for part in back.split(", ")) == 8
    assert "1 tomorrow" in back  # the miss comes back the next day


@pytest.mark.parametrize(
    ("due", "words"),
    [
        (datetime(2026, 12, 6, 18, tzinfo=UTC), "later today"),
        (datetime(2026, 12, 7, 1, tzinfo=UTC), "tomorrow"),
        (datetime(2026, 12, 19, tzinfo=UTC), "in 13 days"),
        (datetime(2027, 4, 13, tzinfo=UTC), "on Tue 13 Apr"),
        (datetime(2027, 12, 20, tzinfo=UTC), "on Mon 20 Dec 2027"),  # not this month's 20th
    ],
)
def test_when_a_star_comes_back_is_said_so_that_it_reads_as_one_day(due, words):
    assert day_words(due, datetime(2026, 12, 6, 9, tzinfo=UTC)) == words


def test_a_round_begun_within_the_hour_of_answers_says_before_its_first_question_they_are_practice(
    client, demo
):
    """Answered in /review or a round minutes ago, the lesson's questions would be practice:
    the new round says so, and until when, before the learner answers, not after."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        assert "within the last hour" not in client.get(practice_url(demo)).content.decode()
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(minutes=20), tick=False):
        first = client.get(practice_url(demo) + "?new=1").content.decode()
    assert "Question 1 of 8" in first
    notice = (
        "You answered some of these questions within the last hour: for an hour after each "
        "answer, answering it again is practice and changes no star (the last until "
    )
    assert notice in first
    until = re.search(r'<time datetime="([^"]+)"', first[first.index(notice) :]).group(1)
    last_answer = Review.objects.latest("reviewed_at").reviewed_at
    assert datetime.fromisoformat(until) == to_the_minute(last_answer + timedelta(hours=1))
    with time_machine.travel(start + timedelta(hours=2), tick=False):
        later = client.get(practice_url(demo) + "?new=1").content.decode()
    assert "Question 1 of 8" in later and notice not in later


SEEN_HINT = "Practice: you answered this question less than an hour ago and saw its answer"


def test_each_question_answered_within_the_hour_says_its_answer_is_practice_without_i_guessed(
    client, demo
):
    """ "Practise again" right after a round: each question was answered minutes ago, so each
    says, as it is asked (the first and the later ones, whole page or htmx), that answering it
    changes no star, and offers no "I guessed", which would change nothing. An hour on, the
    questions count again and offer it."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(minutes=20), tick=False):
        pages = [client.get(practice_url(demo) + "?new=1")]
        assert answer(client, demo, right=True).status_code == 302
        pages.append(client.get(practice_url(demo)))
        pages.append(client.get(practice_url(demo), headers={"HX-Request": "true"}))
    assert Review.objects.latest("reviewed_at").practice
    for page in pages:
        html = page.content.decode()
        assert "Question" in html and 'name="guessed"' not in html
    # the first says it once, in the round's notice; the later ones each in a line of their own
    first = pages[0].content.decode()
    assert "changes no star (the last until " in first and SEEN_HINT not in first
    assert "This question is one of them." in first
    assert all(SEEN_HINT in page.content.decode() for page in pages[1:])
    assert "Question 2 of 8" in pages[-1].content.decode()
    with time_machine.travel(start + timedelta(hours=2), tick=False):
        later = client.get(practice_url(demo) + "?new=1").content.decode()
    assert "Question 1 of 8" in later and SEEN_HINT not in later and 'name="guessed"' in later


def test_a_question_whose_memories_an_editor_reset_counts_again_and_offers_i_guessed(client, demo):
    """Its right answer changed (the editor chose to reset what learners remember of it), a
    question answered minutes ago counts at once: the page says no "practice" of it."""
    finish_round(client, demo, [True] * 8)
    assert answer(client, demo, right=True).status_code == 302  # practice: answered minutes ago
    question, _ = current_question(client, practice_url(demo))
    assert SEEN_HINT in client.get(practice_url(demo)).content.decode()
    services.question_memories_reset(question=question)
    html = client.get(practice_url(demo)).content.decode()
    assert SEEN_HINT not in html and 'name="guessed"' in html
    answer(client, demo, right=True)
    assert not Review.objects.filter(question=question).latest("reviewed_at").practice


def test_every_question_links_to_a_report_about_it(client, demo):
    page = client.get(practice_url(demo))
    question = asked_question(page)
    link = f"{demo.get_absolute_url()}/report?question={question.position}"
    assert f'href="{link}"' in page.content.decode()
    form = client.get(link).context["form"]
    assert form["question"].value() == str(question.position)


def test_a_right_guess_shows_no_star_beside_the_verdict(client, demo):
    question, token = current_question(client, practice_url(demo))
    response = client.post(
        practice_url(demo),
        {"token": token, "choice": right_choices(question), "guessed": "yes"},
    )
    html = client.get(response["Location"]).content.decode()
    assert "Right" in html and 'class="reward reward-' not in html


def test_the_guess_box_says_what_a_guess_does_to_a_kindled_star(client, demo):
    """Ticked on a right answer, "I guessed" puts out the star that answer would have kept
    kindled; the box says so before the learner chooses."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        answer(client, demo, right=True)
    memory = Memory.objects.get()
    assert memory.get_evidence_display() == "kindled"
    with time_machine.travel(memory.due, tick=False):
        page = client.get("/review")
        assert (
            "(a guess, even a right one, leaves its star unlit and brings the question back sooner)"
            in (page.content.decode())
        )
        response = client.post(
            "/review",
            {"token": form_token(page), "choice": right_choices(memory.question), "guessed": "yes"},
        )
        verdict = client.get(response["Location"]).content.decode()
    assert "Star unlit</p>" in verdict
    memory.refresh_from_db()
    assert memory.get_evidence_display() == "unlit"


def test_the_round_lists_a_declared_guess_as_one_and_offers_no_guess_box_in_practice(client, demo):
    question, token = current_question(client, practice_url(demo))
    assert 'name="guessed"' in client.get(practice_url(demo)).content.decode()
    client.post(
        practice_url(demo), {"token": token, "choice": right_choices(question), "guessed": "yes"}
    )
    finish_round(client, demo, [False] + [True] * 6)  # question 2 missed: asked once more
    retry = client.get(practice_url(demo)).content.decode()
    assert "Once more: a question you missed" in retry
    assert 'name="guessed"' not in retry and "G if you guessed" not in retry  # practice
    finish_round(client, demo, [True])
    results = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert results.count("Right, but you guessed") == 1
    assert (
        "<strong>7 of 8</strong> right the first time, 1 of them by a guess you marked." in results
    )
    assert results.count("Right first time") == 6 and results.count("Right on the second try") == 1
    # Right on its retry, question 2 is still missed, as the word's meaning says: the retry,
    # after its answer was shown, was practice.
    assert "1 missed" in results
    assert (
        "your last answer to it that counted was wrong (a retry after its answer was shown is "
        "practice, and does not change this)"
    ) in client.get("/sky/words").content.decode()
    missed = client.get(practice_url(demo) + "?missed=1").content.decode()
    assert "Practice: missed question 1 of 1" in missed and 'name="guessed"' not in missed


def test_practising_a_missed_question_marks_the_choices_in_the_order_it_asked_them(
    client, demo, settings
):
    """Each showing is shuffled away from the one before; the verdict must read the same
    showing, or its letters name other choices than the learner saw. A shuffle lands on the
    earlier order one time in 24, so the question is practised until that has surely come up."""
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answer": (1000, 1000, 60)}
    finish_round(client, demo, [False] + [True] * 7 + [True])
    for _ in range(120):
        page = client.get(practice_url(demo) + "?missed=1&n=1")
        asked = [choice["id"] for choice in page.context["choices"]]
        response = client.post(
            practice_url(demo),
            {"token": form_token(page), "choice": wrong_choices(asked_question(page)), "n": 1},
        )
        verdict = client.get(response["Location"]).context["feedback"]
        assert [choice["id"] for choice in verdict["choices"]] == asked
