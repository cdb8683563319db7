"""What each answer tells the learner at once: the verdict (with the right answer and the start of
the explanation after a miss), what the answer did to its star, and the one live region that
screen readers announce, in the round, in /review and on the flashcards page."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import time_machine
from django.utils import timezone
from django.utils.html import escape

from practice import sky
from practice.models import Memory, Review
from practice.selectors.stars import sitting_stars
from tests.practice.helpers import (
    answer,
    asked_question_or_none,
    finish_round,
    form_token,
    practice_url,
    right_choices,
    shown_moment,
    shows_a_form,
)

LIVE_REGION = re.compile(
    r'<p id="answer-status" class="visually-hidden" role="status"([^>]*)>(.*?)</p>', re.S
)


def live_region(html: str) -> tuple[bool, str]:
    """(whether it is an out-of-band update, its text without tags) of the page's live region."""
    found = LIVE_REGION.findall(html)
    assert len(found) == 1, found
    attributes, text = found[0]
    return 'data-hx-swap-oob="innerHTML"' in attributes, re.sub(r"<[^>]+>", "", text).strip()


def verdict_answer(html: str) -> str:
    found = re.search(r'<p class="verdict-answer[^"]*">(.*?)</p>', html, re.S)
    return re.sub(r"<[^>]+>", "", found[1]) if found else ""


def test_a_miss_shows_the_right_answer_and_the_start_of_why_beside_the_verdict(client, demo):
    response = answer(client, demo, right=False)
    html = client.get(response["Location"]).content.decode()
    question = Review.objects.get().question
    right = next(choice for choice in question.choices if choice["correct"])
    shown = verdict_answer(html)
    assert shown.startswith("The answer is ") and right["text"] in shown
    assert question.explanation_lead in shown
    assert len(question.explanation_lead.split()) >= 5  # a sentence, not a scrap
    assert question.explanation_lead.endswith((".", "!", "?"))
    # Before the full explanation, inside the verdict's bar.
    bar = html[html.find('class="action-bar verdict-bar"') : html.find('<p class="prompt">')]
    assert 'class="verdict-answer verdict-lead"' in bar


def test_a_right_answer_needs_no_answer_beside_its_verdict(client, demo):
    response = answer(client, demo, right=True)
    html = client.get(response["Location"]).content.decode()
    assert "✓</span> Right" in html and verdict_answer(html) == ""


def test_the_live_region_says_the_verdict_the_star_and_the_progress(client, demo):
    page = client.get(practice_url(demo))
    oob, text = live_region(page.content.decode())
    assert (oob, text) == (False, "")  # the page arrives with nothing to announce

    start = timezone.now()
    with time_machine.travel(start, tick=False):
        right = answer(client, demo, right=True, htmx=True).content.decode()
    # and what lighting the star still takes: a new one needs three right answers in a row,
    # the last a day after the first
    more = sky.right_answers_to_light(sky.guess_rate(4, several=False)) - 1
    comes_back = shown_moment(Memory.objects.get().due)
    assert live_region(right) == (
        True,
        f"Right. Star kindled. {more} more right answers in a row light this star; it is due "
        f"on {comes_back}. 1 of 8 answered.",
    )
    client.get(practice_url(demo) + "?q=2", headers={"HX-Request": "true"})
    wrong = answer(client, demo, right=False, htmx=True).content.decode()
    oob, text = live_region(wrong)
    question = Review.objects.latest("pk").question
    right_text = next(c["text"] for c in question.choices if c["correct"])
    assert oob and text.startswith("Not quite. The answer is ") and right_text in text
    comes_back = shown_moment(Memory.objects.get(question=question).due)
    assert text.endswith(
        "right answers in a row light this star, spread over a day or more; it is due on "
        f"{comes_back}. 2 of 8 answered, 1 to retry."
    )
    assert "Star" not in text  # a miss kindles nothing
    # The live region is outside the card the answer replaces, so it stays where it is.
    full = client.get(practice_url(demo) + "?answered=2").content.decode()
    assert full.index('id="answer-status"') < full.index('id="practice-card"')
    # Continuing empties it, so the last verdict is not read again before the next question or
    # before "Round complete" (outside learner review).
    following = client.get(practice_url(demo) + "?q=3", headers={"HX-Request": "true"})
    assert '<p id="answer-status" data-hx-swap-oob="innerHTML"></p>' in following.content.decode()
    assert full.count('role="status"') == 2  # the search's, in the header, and this one


def test_a_verdict_names_the_day_review_asks_its_question_again(client, demo):
    """The moment a verdict gives is when /review brings the question back (it is due), not
    an earlier one from which it could light if the learner came back unasked."""
    start = timezone.now().replace(second=20)  # shown to the minute: which one matters
    with time_machine.travel(start, tick=False):
        response = answer(client, demo, right=True)
        html = client.get(response["Location"]).content.decode()
    verdict = re.sub(r"<[^>]+>", "", html)
    memory = Memory.objects.get()
    assert memory.due > start + sky.CONFIRMATION_GAP  # so no second moment is named
    assert f"light this star; it is due on {shown_moment(memory.due)}." in verdict
    assert "can light from" not in verdict
    with time_machine.travel(memory.due - timedelta(minutes=1), tick=False):
        assert asked_question_or_none(client.get("/review")) is None
    # A learner who comes at the very minute the verdict gives is asked it.
    shown = datetime.fromisoformat(re.search(r'is due on <time datetime="([^"]+)"', html)[1])
    with time_machine.travel(shown, tick=False):
        assert asked_question_or_none(client.get("/review")) == memory.question


def test_a_verdict_says_when_a_star_can_light_if_its_question_is_due_sooner(client, demo, settings):
    """With learning steps set, a right answer is due again within minutes, which /review
    holds back for the sitting; a right answer then cannot light its star yet: the verdict
    gives both moments, the first the one /review asks it at."""
    settings.FSRS_LEARNING_STEPS = [60, 600]
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        response = answer(client, demo, right=True)
        verdict = re.sub(r"<[^>]+>", "", client.get(response["Location"]).content.decode())
    memory = Memory.objects.get()
    assert memory.due == start + timedelta(minutes=10)
    asked_at = start + sky.SITTING
    assert (
        f"light this star; it is due on {shown_moment(asked_at)}, and can light from "
        f"{shown_moment(start + sky.CONFIRMATION_GAP)}."
    ) in verdict
    with time_machine.travel(asked_at - timedelta(minutes=1), tick=False):
        assert asked_question_or_none(client.get("/review")) is None
    with time_machine.travel(asked_at + timedelta(seconds=1), tick=False):
        assert asked_question_or_none(client.get("/review")) == memory.question


def test_a_sittings_end_names_the_kindled_star_that_can_light_first():
    """The nearest to lit needs the fewest answers, then is due first, or, if later, can
    light first; an answer kept before the due was (comes_back_at empty) goes by when it
    can light."""
    now = timezone.now()

    def kindled(pk: int, *, needs: int, due_in=None, lights_in=1) -> Review:
        return Review(
            question_id=pk,
            rating=3,
            reviewed_at=now - timedelta(minutes=10 - pk),  # the later answered, the less near
            answers_to_light=needs,
            lights_from=now + timedelta(days=lights_in),
            comes_back_at=due_in and now + timedelta(days=due_in),
        )

    def nearest(*reviews: Review) -> str:
        names = {("question", review.question_id): f"q{review.question_id}" for review in reviews}
        return sitting_stars(list(reviews), names)["nearest_name"]

    assert nearest(kindled(1, needs=1, due_in=3), kindled(2, needs=1, due_in=2)) == "q2"
    assert nearest(kindled(1, needs=2, due_in=1), kindled(2, needs=1, due_in=5)) == "q2"
    # due first, but it cannot light until a day later than the other can
    assert (
        nearest(kindled(1, needs=1, due_in=1, lights_in=4), kindled(2, needs=1, due_in=2)) == "q2"
    )
    assert nearest(kindled(1, needs=1, due_in=3), kindled(2, needs=1, lights_in=2)) == "q2"


def test_review_verdicts_and_the_set_summary_name_the_stars_they_light(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    for day in (3, 6):
        with time_machine.travel(start + timedelta(days=day), tick=False):
            verdicts = []
            while (page := client.get("/review")) and asked_question_or_none(page):
                question = asked_question_or_none(page)
                posted = client.post(
                    "/review",
                    {"token": form_token(page), "choice": right_choices(question)},
                    headers={"HX-Request": "true"},
                ).content.decode()
                verdicts.append(re.findall(r"Star (lit|kindled)</p>", posted))
                announced = live_region(posted)[1]
                assert announced.startswith("Right.")
                if verdicts[-1] == ["lit"]:  # and when it is next asked, as every verdict says
                    asked_next = Review.objects.latest("pk").comes_back_at
                    said = f"Star lit. It is due on {shown_moment(asked_next)}."
                    assert said in announced
                    assert said[10:] in re.sub(r"<[^>]+>", "", posted)
                # the set's progress, and how many are still due (a set can end before 8)
                done = len(verdicts)
                assert announced.endswith(f" {done} of 8 done in this set, {8 - done} due.")
                # a reload of the verdict's address says the same
                review = Review.objects.latest("pk")
                reloaded = client.get(f"/review?reviewed={review.pk}").content.decode()
                assert live_region(reloaded)[1] == announced
                visible = client.get("/review").content.decode()
                if done < 8:
                    assert f"{done} of 8 done in this set · {8 - done} item" in visible
            end = client.get("/review").content.decode()
        if day == 3:  # more evidence, not yet enough: the stars stay kindled, and say nothing
            assert verdicts == [[]] * 8
    assert verdicts == [["lit"]] * 8  # day 6: each star lit at its answer
    assert "Set done" in end and "This set lit <strong>8 stars</strong>." in end
    assert end.count('class="constellation large"') == 1  # drawn in its constellation
    # named, since a set can draw several lessons, with one way on to the whole sky
    assert f'<strong class="sitting-lesson">{escape(demo.title)}</strong>' in end
    assert end.count(">Your whole sky</a>") == 1


def test_each_flashcard_rating_tells_the_next_card_what_it_did(client, demo):
    url = demo.get_absolute_url() + "/flashcards"
    token = form_token(client.get(url))
    response = client.post(url, {"token": token, "rating": "3"})
    rated = Review.objects.get()
    assert response["Location"] == url + f"?card=2&set={rated.pk}&rated={rated.pk}"
    html = client.get(response["Location"]).content.decode()
    assert "You rated the last card Good." in html and "Star kindled</p>" in html
    assert "Card 2 of" in html

    token = form_token(client.get(url + "?card=2"))
    htmx = client.post(url, {"token": token, "rating": "1"}, headers={"HX-Request": "true"})
    html = htmx.content.decode()
    assert "You rated the last card Again." in html and "Star " not in verdict_region(html)
    oob, said = live_region(html)
    # and what the star now needs: a miss asks for more ratings of Hard or better
    assert oob and said.startswith("You rated the last card Again. ")
    comes_back = shown_moment(
        Memory.objects.get(flashcard=Review.objects.latest("pk").flashcard).due
    )
    assert said.endswith(
        " ratings of Hard or better in a row light this star, spread over a day or more; it "
        f"is due on {comes_back}."
    )
    assert 'id="sky-counter"' in html  # the header's counts follow the rating


def test_a_rating_note_kept_past_its_sitting_is_not_told_again(client, demo):
    """/review?rated= restored in a tab days later shows today's item, not that old note."""
    url = demo.get_absolute_url() + "/flashcards"
    client.post(url, {"token": form_token(client.get(url)), "rating": "3"})
    address = f"/review?rated={Review.objects.get().pk}"
    assert "You rated the last card Good." in client.get(address).content.decode()
    with time_machine.travel(timezone.now() + timedelta(days=5)):
        response = client.get(address)
    assert "You rated the last card" not in response.content.decode()
    assert shows_a_form(response)  # the card, due again, is asked


def verdict_region(html: str) -> str:
    found = re.search(r'<div class="rated-note">(.*?)</div>', html, re.S)
    return found[1] if found else ""


def test_a_rating_in_the_review_is_told_on_the_next_item(client, demo):
    url = demo.get_absolute_url() + "/flashcards"
    client.post(url, {"token": form_token(client.get(url)), "rating": "3"})
    card = Review.objects.get().flashcard
    with time_machine.travel(timezone.now() + timedelta(days=30), tick=False):
        page = client.get("/review")  # the one card rated is the one item due
        # numbered as its star is named in the sky ("Flashcard 1 of …: kindled")
        heading = re.search(r"Flashcard (\d+) of <a ", page.content.decode())
        assert heading, "the heading numbers the card"
        assert f"<title>Flashcard {heading[1]} of {card.lesson.title}: " in client.get("/sky").text
        response = client.post("/review", {"token": form_token(page), "rating": "3"})
        review = Review.objects.latest("pk")
        assert review.flashcard == card and not review.practice
        assert response["Location"] == f"/review?rated={review.pk}"
        html = client.get(response["Location"]).content.decode()
        assert "You rated the last card Good." in html
        said = f": star {review.star_change}." if review.star_change else "."
        more = review.answers_to_light
        # (the run began a month ago: any later rating may light it, once the card is back)
        comes_back = shown_moment(Memory.objects.get(flashcard=card).due)
        to_light = (
            f" {more} more ratings of Hard or better in a row light this star; it is due on "
            f"{comes_back}."
        )
        # with the set's progress, as after a question's answer
        progress = " 1 of 1 done in this set, 0 due."
        assert live_region(html) == (
            False,
            "You rated the last card Good" + said + to_light + progress,
        )
        assert more and more < sky.right_answers_to_light(sky.FLASHCARD_GUESS_RATE)


def test_a_right_answer_written_as_a_sentence_is_not_given_a_second_full_stop(client, demo):
    sentences = [
        q
        for q in demo.questions.all()
        if next(c for c in q.choices if c["correct"])["text"][-1] == "."
    ]
    assert sentences, "the demo has right answers written as sentences"
    said = []
    for _ in range(8):
        said.append(live_region(answer(client, demo, right=False, htmx=True).content.decode())[1])
    assert len(said) == 8 and not any(".." in text for text in said), said
    assert any(
        next(c for c in q.choices if c["correct"])["text"] in " ".join(said) for q in sentences
    )


def test_a_verdict_says_when_the_one_answer_left_can_light_its_star(client, demo):
    """A star one right answer from lit cannot light before a day after its run began: the
    verdict said "1 more right answer lights this star" to a learner practising again two
    hours later, whose next right answer then lit nothing (learner review of stop 71)."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    later = start + timedelta(hours=2)
    with time_machine.travel(later, tick=False):
        response = answer(client, demo, right=True)
        verdict = re.sub(r"<[^>]+>", "", client.get(response["Location"]).content.decode())
    review = Review.objects.latest("pk")
    assert review.answers_to_light == 1 and review.lights_from > later
    assert (
        f"1 more right answer lights this star; it is due on {shown_moment(review.comes_back_at)}"
        f", and can light from {shown_moment(review.lights_from)}."
    ) in verdict


def test_the_moment_a_verdict_names_is_never_within_the_practice_hour(client, demo):
    """Half an hour before the run's day is up, the moment named was that day's end, when an
    answer would still be practice, an hour after this one (diff review of stop 71)."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    later = start + sky.CONFIRMATION_GAP - timedelta(minutes=30)
    with time_machine.travel(later, tick=False):
        response = answer(client, demo, right=True)
        verdict = re.sub(r"<[^>]+>", "", client.get(response["Location"]).content.decode())
    review = Review.objects.latest("pk")
    assert review.answers_to_light == 1 and review.lights_from < later + sky.SITTING
    assert f", and can light from {shown_moment(later + sky.SITTING)}." in verdict
