"""The home page's call to action and small sky, and the lesson cards' states, for a new, an
active and a returning learner."""

from __future__ import annotations

import re
from datetime import timedelta

import time_machine
from django.utils import timezone

from lessons.models import Lesson
from practice.models import Learner, Memory
from tests.factories import make_lesson
from tests.practice.helpers import (
    answer,
    counter_text,
    finish_round,
    learn_everything_in,
    rate_every_card,
)

FIRST_ID = "mt_twcpO-945r"  # the demo lesson with nothing to learn first
NOT_STARTED = '<span class="muted">not started</span>'


def stars_of(lesson: Lesson) -> int:
    return lesson.questions.count() + lesson.flashcards.count()


def next_step(html: str) -> str:
    found = re.search(r'<p class="next-step">(.*?)</p>', html, re.S)
    assert found, "no call to action"
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


def card_states(html: str) -> dict[str, str]:
    """Each lesson card's title and state line."""
    cards = re.findall(
        r'<article class="lesson-card">\s*<h3><a href="[^"]*">([^<]*)</a></h3>.*?</article>',
        html,
        re.S,
    )
    states = re.findall(
        r'<article class="lesson-card">.*?(?:<p class="lesson-state">(.*?)</p>|</article>)',
        html,
        re.S,
    )
    return dict(zip(cards, states, strict=True))


def home_sky_cards(html: str) -> list[tuple[str, str]]:
    return re.findall(
        r'<a class="home-sky-card" href="[^"]*">.*?<span class="card-name">([^<]*)</span> '
        r'<span class="card-counts">([^<]*)</span>',
        html,
        re.S,
    )


def test_a_new_browser_is_invited_to_start_with_the_first_lesson(client, demo):
    first = Lesson.objects.get(public_id=FIRST_ID)
    assert not first.needs_first.exists()
    response = client.get("/")
    html = response.content.decode()
    assert next_step(html) == f"Start here: {first.title}"
    assert f'<a class="button" href="{first.get_absolute_url()}">Start here:' in html
    assert "Your sky is waiting for its first right answer" in html
    # The drawing of lit stars beside it is said to be an example, not this browser's sky.
    assert "like this example with two stars lit" in html
    # Nothing of the catalogue is drawn, and no card claims a state for someone with none.
    assert home_sky_cards(html) == [] and 'role="img"><title>' not in html
    assert 'class="lesson-state"' not in html
    assert not response.cookies


def test_an_active_learner_continues_their_lesson_and_sees_its_stars(client, demo):
    answer(client, demo, right=True)
    html = client.get("/").content.decode()
    assert next_step(html) == f"Continue: {demo.title}"
    states = card_states(html)
    assert states[demo.title] == f"0 lit · 1 kindled of {stars_of(demo)}"
    others = Lesson.objects.published().exclude(pk=demo.pk)
    assert all(states[lesson.title] == NOT_STARTED for lesson in others)
    assert home_sky_cards(html) == [(demo.title, f"0 lit · 1 kindled of {stars_of(demo)}")]
    # The header counter uses the same words.
    assert counter_text(html) == "Your sky: 1 kindled"
    subject_page = client.get("/learn/computing/").content.decode()
    assert card_states(subject_page)[demo.title] == f"0 lit · 1 kindled of {stars_of(demo)}"


def test_a_returning_learner_is_asked_to_review_what_is_due(client, demo):
    finish_round(client, demo, [True] * 8)
    with time_machine.travel(timezone.now() + timedelta(days=60), tick=False):
        html = client.get("/").content.decode()
        subject_page = client.get("/learn/computing/").content.decode()
    assert next_step(html) == "Review 8 due"
    assert '<a class="button" href="/review">Review 8 due</a>' in html
    words = f"0 lit · 8 kindled of {stars_of(demo)} · 8 due"
    assert card_states(html)[demo.title] == words
    assert card_states(subject_page)[demo.title] == words
    assert home_sky_cards(html) == [(demo.title, words)]
    assert counter_text(html) == "Your sky: 8 kindled · 8 due"  # nothing earned is lost to time


def test_a_lesson_set_back_to_draft_leaves_the_counter_and_the_review(client, demo):
    finish_round(client, demo, [True] * 8)
    other = Lesson.objects.published().exclude(pk=demo.pk).first()
    assert other is not None
    with time_machine.travel(timezone.now() + timedelta(days=60), tick=False):
        assert (
            counter_text(client.get(other.get_absolute_url()).content.decode())
            == "Your sky: 8 kindled · 8 due"
        )
        assert "Nothing is due right now" not in client.get("/review").content.decode()

        Lesson.objects.filter(pk=demo.pk).update(status=Lesson.Status.DRAFT)

        assert counter_text(client.get(other.get_absolute_url()).content.decode()) == "Your sky"
        review = client.get("/review").content.decode()
    assert "Nothing is due right now" in review and counter_text(review) == "Your sky"


def test_a_learner_who_learned_their_lesson_continues_with_the_next_one(client, demo):
    answer(client, demo, right=True)
    learner = Learner.objects.get(public_id=client.session["learner"])
    Memory.objects.filter(learner=learner).delete()
    learn_everything_in(learner, demo, reviewed_days_ago=1)
    html = client.get("/").content.decode()
    first = Lesson.objects.get(public_id=FIRST_ID)
    assert next_step(html) == f"Learn something new: {first.title}"
    assert card_states(html)[demo.title] == f"{stars_of(demo)} lit · 0 kindled of {stars_of(demo)}"


def test_a_lesson_whose_every_item_is_answered_is_not_offered_again_while_nothing_is_due(
    client, demo
):
    """Its stars are kindled and come back through /review when due: until then the home page
    and /review offer the next lesson, not the lesson just done; while its flashcards were never
    rated, both lead to them."""
    finish_round(client, demo, [True] * 8)
    # Its flashcards are all that is left to meet: both pages lead to them.
    cards = demo.get_absolute_url() + "/flashcards"
    home = client.get("/").content.decode()
    assert next_step(home) == f"Continue with the flashcards: {demo.title}"
    assert f'<a class="button" href="{cards}">Continue with the flashcards:' in home
    review = client.get("/review").content.decode()
    assert f'href="{cards}">Continue with the flashcards: {demo.title}</a>' in review
    rate_every_card(client, demo.get_absolute_url() + "/flashcards", "3")
    html = client.get("/").content.decode()
    first = Lesson.objects.get(public_id=FIRST_ID)
    assert next_step(html) == f"Learn something new: {first.title}"
    review = client.get("/review").content.decode()
    assert f"Learn something new: {first.title}" in review


def test_the_home_sky_draws_only_the_six_latest_lessons(client, demo):
    answer(client, demo, right=True)
    learner = Learner.objects.get(public_id=client.session["learner"])
    lessons = [make_lesson(title=f"Extra {n}", slug=f"extra-{n}") for n in range(8)]
    for days_ago, lesson in enumerate(lessons, start=1):
        learn_everything_in(learner, lesson, reviewed_days_ago=days_ago)
    html = client.get("/").content.decode()
    drawn = [name for name, _ in home_sky_cards(html)]
    # The seed lesson was answered just now; then the extras from the most recent.
    assert drawn == [demo.title] + [lesson.title for lesson in lessons[:5]]
    assert html.count("home-sky-svg") == 6
