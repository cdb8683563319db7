"""Staff previews: an editor's answers (and any answer to a draft) are kept and scheduled for
that browser, but the editors' analytics never count them."""

from __future__ import annotations

from django.test import Client

from lessons.models import Lesson
from practice import analytics
from practice.models import Memory, Review
from tests.practice.helpers import finish_round, form_token


def test_an_editors_round_is_a_preview_scheduled_but_not_counted(demo, editor_client):  # noqa: F811
    finish_round(editor_client, demo, [True] * 8)
    assert set(Review.objects.values_list("origin", flat=True)) == {Review.Origin.PREVIEW}
    assert Memory.objects.filter(lesson=demo).count() == 8  # scheduled like any answer
    assert all(row.learners == 0 for row in analytics.lesson_question_rows(demo))
    page = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    assert "No learner has answered these questions yet." in page
    listing = editor_client.get(f"/admin/lessons/question/?lesson__id__exact={demo.pk}")
    assert "% of" not in listing.content.decode()  # no "right first time" from previews


def test_a_learners_round_still_counts_beside_the_editors_preview(demo, editor_client):  # noqa: F811
    finish_round(editor_client, demo, [True] * 8)
    finish_round(Client(), demo, [False] + [True] * 8)
    first = analytics.lesson_question_rows(demo)[0]
    assert (first.learners, first.right) == (1, 0)
    assert Review.objects.filter(origin=Review.Origin.ANSWERED).count() == 9


def test_answers_to_a_draft_are_previews_even_in_the_review_of_flashcards(demo, editor_client):  # noqa: F811
    Lesson.objects.filter(pk=demo.pk).update(status=Lesson.Status.DRAFT)
    demo.refresh_from_db()
    finish_round(editor_client, demo, [True] * 8)
    card = demo.flashcards.first()
    url = demo.get_absolute_url() + "/flashcards"
    form = editor_client.get(url)
    token = form_token(form)
    assert editor_client.post(url, {"token": token, "rating": "3"}).status_code == 302
    assert Review.objects.filter(flashcard=card, origin=Review.Origin.PREVIEW).count() == 1
    assert not Review.objects.exclude(origin=Review.Origin.PREVIEW).exists()
    assert analytics.lesson_flashcard_rows(demo)[0].ratings == 0
