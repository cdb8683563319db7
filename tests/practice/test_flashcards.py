from __future__ import annotations

from practice.models import Memory, Review


def flashcards_url(lesson) -> str:
    return lesson.get_absolute_url() + "/flashcards"


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
    card, token = response.context["card"], response.context["token"]
    response = client.post(flashcards_url(demo), {"token": token, "rating": "4"})
    assert response.status_code == 302
    assert response["Location"] == flashcards_url(demo) + "?card=2"
    review = Review.objects.get()
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
        token = client.get(flashcards_url(demo) + f"?card={number}").context["token"]
        client.post(flashcards_url(demo), {"token": token, "rating": rating})
    hard = Memory.objects.get(flashcard=cards[0])
    easy = Memory.objects.get(flashcard=cards[1])
    assert easy.due > hard.due


def test_after_the_last_card_the_learner_is_told_they_are_done(client, demo):
    count = demo.flashcards.count()
    html = client.get(flashcards_url(demo) + f"?card={count + 1}").content.decode()
    assert f"All {count} cards rated" in html


def test_a_bad_rating_is_refused(client, demo):
    token = client.get(flashcards_url(demo)).context["token"]
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
    token = client.get(demo.get_absolute_url() + "/practice").context["token"]
    response = client.post(flashcards_url(demo), {"token": token, "rating": "3"})
    assert response.status_code == 400
    assert Review.objects.count() == 0


def test_htmx_rating_swaps_in_the_next_card(client, demo):
    token = client.get(flashcards_url(demo)).context["token"]
    response = client.post(
        flashcards_url(demo), {"token": token, "rating": "3"}, headers={"HX-Request": "true"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "Card 2 of" in html


def test_the_same_rating_posted_twice_counts_once(client, demo):
    token = client.get(flashcards_url(demo)).context["token"]
    client.post(flashcards_url(demo), {"token": token, "rating": "3"})
    client.post(flashcards_url(demo), {"token": token, "rating": "3"})
    assert Review.objects.count() == 1
