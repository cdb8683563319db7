from __future__ import annotations

import re
from datetime import timedelta

import time_machine
from django.utils import timezone

from practice import sky
from practice.models import Learner, Memory, Review
from tests.practice.helpers import (
    answer,
    form_token,
    learn_everything_in,
    rate_every_card,
    shown_moment,
)


def flashcards_url(lesson) -> str:
    return lesson.get_absolute_url() + "/flashcards"


def rate(client, page, rating: str):
    """Rate the card `page` shows, as its form posts (with the set's cards rated Again and its
    start), and follow to the next page."""
    url = page.context["lesson"].get_flashcards_url()
    data = {"token": form_token(page), "rating": rating}
    for field, name in (("again", "again_ids"), ("set", "set_start")):
        if page.context.get(name):
            data[field] = page.context[name]
    return client.get(client.post(url, data)["Location"])


def test_flashcards_show_the_front_with_the_back_behind_a_reveal(client, demo):
    response = client.get(flashcards_url(demo))
    html = response.content.decode()
    card = demo.flashcards.first()
    assert "Card 1 of" in html
    assert "Show the answer" in html and "<details" in html
    for label in (
        "Again <kbd>1</kbd>",
        "Hard <kbd>2</kbd>",
        "Good <kbd>3</kbd>",
        "Easy <kbd>4</kbd>",
    ):
        assert label in html
    assert response.context["card"] == card


def test_rating_a_card_schedules_it_by_the_learners_rating(client, demo):
    response = client.get(flashcards_url(demo))
    card, token = response.context["card"], form_token(response)
    response = client.post(flashcards_url(demo), {"token": token, "rating": "4"})
    assert response.status_code == 302
    review = Review.objects.get()
    assert (
        response["Location"] == flashcards_url(demo) + f"?card=2&set={review.pk}&rated={review.pk}"
    )
    assert (review.flashcard, review.rating, review.correct, review.answer) == (
        card,
        4,
        None,
        "Easy",
    )
    memory = Memory.objects.get()
    assert memory.flashcard == card and memory.last_rating == 4


def test_easy_schedules_further_out_than_hard(client, demo):
    cards = list(demo.flashcards.all())
    for number, rating in ((1, "2"), (2, "4")):
        token = form_token(client.get(flashcards_url(demo) + f"?card={number}"))
        client.post(flashcards_url(demo), {"token": token, "rating": rating})
    hard = Memory.objects.get(flashcard=cards[0])
    easy = Memory.objects.get(flashcard=cards[1])
    assert easy.due > hard.due


def test_after_the_last_card_the_learner_is_told_they_are_done(client, demo):
    count = demo.flashcards.count()
    html = client.get(flashcards_url(demo) + f"?card={count + 1}").content.decode()
    assert f"All {count} cards rated" in html


def test_a_bad_rating_is_refused(client, demo):
    token = form_token(client.get(flashcards_url(demo)))
    for rating, message in (
        ("7", "is not a rating"),
        ("", "No rating was chosen"),
        ("x", "is not a rating"),
    ):
        response = client.post(flashcards_url(demo), {"token": token, "rating": rating})
        assert response.status_code == 400
        assert message in response.content.decode()
    assert Review.objects.count() == 0


def test_a_question_token_is_not_a_flashcard_rating(client, demo):
    token = form_token(client.get(demo.get_absolute_url() + "/practice"))
    response = client.post(flashcards_url(demo), {"token": token, "rating": "3"})
    assert response.status_code == 400
    assert Review.objects.count() == 0


def test_htmx_rating_swaps_in_the_next_card(client, demo):
    token = form_token(client.get(flashcards_url(demo)))
    response = client.post(
        flashcards_url(demo), {"token": token, "rating": "3"}, headers={"HX-Request": "true"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "Card 2 of" in html


def test_the_same_rating_posted_twice_counts_once(client, demo):
    token = form_token(client.get(flashcards_url(demo)))
    client.post(flashcards_url(demo), {"token": token, "rating": "3"})
    client.post(flashcards_url(demo), {"token": token, "rating": "3"})
    assert Review.objects.count() == 1


def test_each_rating_says_what_it_does_next(client, demo):
    html = client.get(flashcards_url(demo)).content.decode()
    labels = re.findall(
        r'<span class="rating-name">(\w+) <kbd>\d</kbd></span> '
        r'<span class="rating-next">([^<]+)</span>',
        html,
    )
    assert [name for name, _ in labels] == ["Again", "Hard", "Good", "Easy"]
    assert labels[0][1] == "again at the end"
    days = [float(re.match(r"[\d.]+", after).group()) for _, after in labels[1:]]
    units = [after.split()[-1] for _, after in labels[1:]]
    assert all(unit in ("min", "h", "day", "days", "mo", "yr") for unit in units), labels
    assert units[-1] in ("days", "mo", "yr") and days[-1] > 1  # Easy: days away at least


LABEL_UNITS = {"min": timedelta(minutes=1), "h": timedelta(hours=1), "day": timedelta(days=1)}


def label_as_time(label: str) -> timedelta:
    number, unit = label.split()
    return float(number) * LABEL_UNITS[unit.removesuffix("s")]


def test_each_rating_says_when_it_truly_brings_the_card_back(client, demo):
    """Until its star is lit a card comes back within days, whatever the rating, and the
    buttons say so: they promised "Easy 8 days" of a card that came back in 3."""
    url = flashcards_url(demo)
    now = timezone.now()
    with time_machine.travel(now, tick=False):
        for number, rating, name in ((1, "3", "Good"), (2, "4", "Easy")):
            page = client.get(f"{url}?card={number}")
            labels = dict(
                re.findall(
                    r'<span class="rating-name">(\w+) <kbd>\d</kbd></span> '
                    r'<span class="rating-next">([^<]+)</span>',
                    page.content.decode(),
                )
            )
            client.post(url, {"token": form_token(page), "rating": rating})
            memory = Memory.objects.get(flashcard=page.context["card"])
            assert memory.due - now == label_as_time(labels[name]), (name, labels, memory.due)
        assert label_as_time(labels["Easy"]) <= timedelta(days=3)


def test_a_card_rated_again_comes_back_once_at_the_end_as_practice(client, demo):
    cards = list(demo.flashcards.all())
    url = flashcards_url(demo)
    page = client.get(url)
    response = client.post(url, {"token": form_token(page), "rating": "1"})
    rated = Review.objects.get()
    assert (
        response["Location"] == f"{url}?card=2&again={cards[0].pk}&set={rated.pk}&rated={rated.pk}"
    )
    for number in range(2, len(cards) + 1):
        page = client.get(f"{url}?card={number}&again={cards[0].pk}")
        response = client.post(
            url, {"token": form_token(page), "rating": "3", "again": str(cards[0].pk)}
        )
    page = client.get(response["Location"])
    assert page.context["card"] == cards[0] and page.context["practice"]
    assert "Once more: a card you rated Again" in page.content.decode()
    memory_before = Memory.objects.get(flashcard=cards[0]).memory_state
    response = client.post(
        url, {"token": form_token(page), "rating": "4", "again": str(cards[0].pk)}
    )
    assert Review.objects.filter(flashcard=cards[0]).latest("pk").practice
    assert Memory.objects.get(flashcard=cards[0]).memory_state == memory_before
    done = client.get(response["Location"]).content.decode()
    assert f"All {len(cards)} cards rated" in done


def first_back() -> str:
    """The star of the flashcard that comes back first, and when, as a sitting's end says it."""
    memory = Memory.objects.filter(flashcard__isnull=False).earliest("due")
    star = f"the star of flashcard {memory.flashcard.position} of “{memory.lesson.title}”"
    return f"{star}; it is due on {shown_moment(memory.due)}"


def test_going_through_the_cards_again_sums_up_that_set_only(client, demo):
    url = flashcards_url(demo)
    cards = demo.flashcards.count()
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        first = rate_every_card(client, url, "3")
    assert f"This set kindled <strong>{cards} stars</strong>." in first
    # One live region, the header's search status aside: the set's summary was a second one,
    # read out over the last rating's (outside learner review).
    assert first.count('role="status"') == 2
    # What lighting them takes, told of flashcards: ratings, not right answers.
    assert (
        "A kindled star lights after more ratings of Hard or better in a row, spread over a "
        "day or more: a new flashcard needs 4 in all, its first included, and each Again "
        "before it lights adds up to two more."
    ) in first
    assert "right answers" not in first.split('class="round-stars"')[1].split("</p>")[0]
    # Two hours on, the same cards again: rated Good again, they were kindled already.
    # (the clock running, so that each card is due at its own moment, and one is due first)
    with time_machine.travel(start + timedelta(hours=2), tick=True):
        second = rate_every_card(client, url, "3")
    assert f"All {cards} cards rated" in second
    assert "This set kindled" not in second
    # Told where they stand, in a flashcard's words: Good on a new card, Good again two hours
    # later, is two of the four ratings a new card needs (the last a day after the first).
    # And when the first of them comes back, which is after the day that run needs.
    first_due = Memory.objects.filter(flashcard__isnull=False).earliest("due").due
    assert first_due > start + timedelta(days=1)
    assert (
        f"No star lit or kindled this set; {cards} of its stars are kindled. The nearest to lit: "
        f"2 more ratings of Hard or better in a row light {first_back()}."
    ) in re.sub(r"<[^>]+>", "", second)
    # Two sets more the same day: the last still needs one rating, a day after the first,
    # which it says, or a set before then would be promised a lighting it cannot give.
    for hours in (4, 6):
        with time_machine.travel(start + timedelta(hours=hours), tick=True):
            later = re.sub(r"<[^>]+>", "", rate_every_card(client, url, "3"))
        assert (
            f"{cards} of its stars are kindled. The nearest to lit: 1 more rating of Hard or "
            f"better lights {first_back()}, and can light from "
            f"{shown_moment(start + sky.CONFIRMATION_GAP)}."
        ) in later
    # Again on each: every kindled star is put out, and said so in a flashcard's words.
    with time_machine.travel(start + timedelta(hours=8), tick=False):
        third = rate_every_card(client, url, "1")
    assert (
        "No star lit or kindled this set: a rating of Hard or better kindles a star, and a few "
        "more ratings of Hard or better in a row, spread over a day or more, light it."
    ) in third
    assert (
        f"<strong>{cards} stars</strong> are unlit after a rating of Again, until ratings of "
        "Hard or better kindle them again and light them."
    ) in third


def test_cards_gone_through_again_within_the_hour_are_practice_and_move_nothing(client, demo):
    """Their answers were on screen minutes ago: rating them again tests the screen, not
    memory, so the set says so before and after, and no card moves."""
    url = flashcards_url(demo)
    cards = demo.flashcards.count()
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        rate_every_card(client, url, "1")
    memories = {m.pk: (m.memory_state, m.evidence_now) for m in Memory.objects.all()}
    # Time stands still here, so each card's re-ask at the set's end is the same attempt as its
    # Again, and the set never ends: "Start again from card 1" begins the next.
    with time_machine.travel(start + timedelta(minutes=40), tick=False):
        first_card = client.get(f"{url}?card=1").content.decode()
        again = rate_every_card(client, f"{url}?card=1", "4")
    assert "you saw this answer less than an hour ago, so your rating does not move" in first_card
    assert "3 days" not in first_card and "practice</span>" in first_card
    assert f"All {cards} cards rated" in again
    assert (
        "This set was practice: you had seen each answer less than an hour before, so it lit "
        "and kindled no star."
    ) in again
    until = start + timedelta(minutes=40) + timedelta(hours=1)
    assert (
        "for an hour after each, rating the card again is practice (until "
        f"{shown_moment(until)} for the last)"
    ) in re.sub(r"<[^>]+>", "", again)
    assert {m.pk: (m.memory_state, m.evidence_now) for m in Memory.objects.all()} == memories
    assert Review.objects.filter(practice=False).count() == cards
    # An hour after the last sight of each answer, the ratings count again.
    with time_machine.travel(start + timedelta(minutes=105), tick=False):
        counted = rate_every_card(client, f"{url}?card=1", "3")
    assert f"This set kindled <strong>{cards} stars</strong>." in counted


def test_a_set_counts_its_practice_in_cards(client, demo):
    """One card seen minutes before the set: the set's end counts practice in cards, not in
    ratings (a set may rate a card twice)."""
    url = flashcards_url(demo)
    cards = demo.flashcards.count()
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client.post(url, {"token": form_token(client.get(url)), "rating": "3"})  # card 1
    with time_machine.travel(start + timedelta(minutes=20), tick=False):
        # the set begun with card 1 is left there: this one starts again from card 1
        end = rate_every_card(client, f"{url}?card=1", "3", first="1")  # card 1 Again: practice
    assert f"This set kindled <strong>{cards - 1} stars</strong>. The nearest to lit: " in end
    assert (
        f" 1 of its {cards} cards was practice, rated less than an hour after you had seen the "
        "answer, so it changed no star."
    ) in end


def test_a_card_rated_twice_in_one_set_is_summed_up_once(client, demo):
    """Back to card 2 and rated again: the set still sums up every card, each by its first
    rating in the set, and a card rated Again comes back at the end as practice."""
    url = flashcards_url(demo)
    cards = list(demo.flashcards.all())
    page = client.get(url)
    next_url = client.post(url, {"token": form_token(page), "rating": "3"})["Location"]
    card_two = client.get(next_url)
    client.post(
        url, {"token": form_token(card_two), "rating": "1", "set": card_two.context["set_start"]}
    )
    card_two_again = client.get(next_url)  # Back, and the page loaded afresh
    response = client.post(
        url,
        {"token": form_token(card_two_again), "rating": "3", "set": card_two.context["set_start"]},
    )
    while True:
        page = client.get(response["Location"])
        if page.context.get("card") is None:
            break
        data = {"token": form_token(page), "rating": "3", "set": page.context["set_start"]}
        if page.context.get("again_ids"):
            data["again"] = page.context["again_ids"]
        response = client.post(url, data)
    done = page.content.decode()
    assert f"All {len(cards)} cards rated" in done
    assert f"This set kindled <strong>{len(cards) - 1} stars</strong>." in done


def test_ratings_that_bring_a_card_back_alike_say_so_and_what_still_differs(client, demo):
    """An unlit star comes back within days whatever the rating: buttons that all read "3
    days" say why, rather than look as if the choice does not matter."""
    url = flashcards_url(demo)
    now = timezone.now()
    with time_machine.travel(now, tick=False):
        first = client.get(f"{url}?card=1")
        client.post(url, {"token": form_token(first), "rating": "3"})
    with time_machine.travel(now + timedelta(days=3), tick=False):
        again = client.get(f"{url}?card=1").content.decode()
    labels = re.findall(r'<span class="rating-next">([^<]+)</span>', again)
    assert labels[1] == labels[2] == labels[3], labels
    assert (
        f"Hard, Good and Easy all bring this card back in {labels[2]}, as a star not yet lit "
        "comes back within days; your choice still shapes how far apart its visits grow once "
        "it is lit."
    ) in again
    new = client.get(f"{url}?card=2").content.decode()
    labels = re.findall(r'<span class="rating-next">([^<]+)</span>', new)
    assert len(set(labels[1:])) > 1 and "all bring this card back" not in new, labels


def test_a_lit_card_whose_ratings_round_alike_is_not_told_it_is_unlit(client, demo):
    """Long intervals round to months or years, so Hard, Good and Easy can read alike for a
    lit card too: the note about stars not yet lit is not its to show."""
    answer(client, demo, right=True)
    learner = Learner.objects.get(public_id=client.session["learner"])
    Memory.objects.filter(learner=learner).delete()
    learn_everything_in(learner, demo, reviewed_days_ago=1)
    Memory.objects.filter(learner=learner, flashcard__isnull=False).update(stability=400.0)
    page = client.get(f"{flashcards_url(demo)}?card=1").content.decode()
    labels = re.findall(r'<span class="rating-next">([^<]+)</span>', page)
    assert labels[1] == labels[2] == labels[3], labels
    assert "all bring this card back" not in page


def test_a_sets_end_kept_past_its_sitting_starts_a_new_set(client, demo):
    """A phone restores the tab of a set done weeks ago: it is not summed up again as a set
    that lit nothing today."""
    url = demo.get_absolute_url() + "/flashcards"
    assert "This set kindled" in rate_every_card(client, url, "3")
    first, last = Review.objects.order_by("pk").first(), Review.objects.order_by("pk").last()
    end = f"{url}?card={demo.flashcards.count() + 1}&set={first.pk}&rated={last.pk}"
    assert "This set kindled" in client.get(end).content.decode()
    with time_machine.travel(timezone.now() + timedelta(days=40)):
        response = client.get(end)
        assert response.status_code == 302 and response["Location"] == url
        assert "Card 1 of" in client.get(url).content.decode()


def test_a_set_left_part_way_goes_on_where_it_stood_with_its_again_card(client, demo):
    """Card 1 rated Again and cards 2 and 3 Good, then the learner goes to the lesson and back
    by its Flashcards link: the set goes on at card 4, still asks card 1 once more at its end,
    and sums up the whole set. "Start again from card 1" starts one; after the sitting the link
    starts a new set."""
    cards = list(demo.flashcards.all())
    url = flashcards_url(demo)

    start = timezone.now()
    with time_machine.travel(start):  # time goes on: card 1's re-ask is an answer of its own
        page = client.get(url)
        for rating in ("1", "3", "3"):
            page = rate(client, page, rating)
        client.get(demo.get_absolute_url())
        page = client.get(url)
        html = page.content.decode()
        assert f"Card 4 of {len(cards)}" in html and "Going on with the set you left" in html
        assert f'href="{url}?card=1"' in html
        assert "Card 1 of" in client.get(f"{url}?card=1").content.decode()
        while page.context.get("card") is not None and not page.context["practice"]:
            page = rate(client, page, "3")
        assert page.context["card"] == cards[0]
        assert "Once more: a card you rated Again" in page.content.decode()
        done = rate(client, page, "3")
        assert f"All {len(cards)} cards rated" in done.content.decode()
        assert sum(n for _, n in done.context["summary"]["comes_back"]) == len(cards)
        assert "Card 1 of" in client.get(url).content.decode()  # the set is done: a new one
    with time_machine.travel(start + timedelta(minutes=10), tick=False):
        rate(client, rate(client, client.get(url), "3"), "3")
    with time_machine.travel(start + timedelta(hours=2), tick=False):
        html = client.get(url).content.decode()
    assert "Card 1 of" in html and "Going on with the set" not in html


def test_card_1_rated_in_review_begins_no_set(client, demo):
    """/review asks card 1 when it comes due: the lesson's flashcards do not then claim a set
    the learner never began."""
    url = flashcards_url(demo)
    first_card = demo.flashcards.order_by("position").first()
    client.post(url, {"token": form_token(client.get(url)), "rating": "1"})  # card 1: Again
    with time_machine.travel(timezone.now() + timedelta(days=1, hours=1)):
        review = client.get("/review")
        assert review.context.get("card") == first_card
        assert client.post("/review", {"token": form_token(review), "rating": "3"}).status_code
        html = client.get(url).content.decode()
    assert "Card 1 of" in html and "Going on with the set" not in html


def test_starting_again_from_card_1_is_the_set_taken_up_later(client, demo):
    """A set left before its card rated Again came back once more; "Start again from card 1",
    two cards rated, the lesson, and back: the new set goes on at card 3."""
    url = flashcards_url(demo)
    cards = demo.flashcards.count()

    page = client.get(url)
    for rating in ["1"] + ["3"] * (cards - 1):
        page = rate(client, page, rating)
    assert "Once more: a card you rated Again" in page.content.decode()
    assert "Once more" in client.get(url).content.decode()  # taken up at its end
    page = client.get(f"{url}?card=1")
    for _ in range(2):
        page = rate(client, page, "3")
    html = client.get(url).content.decode()
    assert f"Card 3 of {cards}" in html and "Going on with the set you left" in html
