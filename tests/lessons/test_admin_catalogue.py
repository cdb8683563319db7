"""Authoring and finding things in the admin: a draft keeps its empty blocks after its first save,
flashcards keep distinct places, "Save as a new draft" copies a lesson with new keys, and the
lists' filters and search stay usable at catalogue scale."""

from __future__ import annotations

import re

from django.test import Client

from lessons.models import Area, Lesson, ProblemReport, Question, Subject
from practice.models import Memory
from tests.factories import make_area, make_lesson
from tests.lessons.test_admin import change_page_data
from tests.lessons.test_lesson_editor import title_only
from tests.lessons.test_lesson_file_import import export, refused
from tests.practice.helpers import answer
from tools.catalogue import add_lessons


def change_url(lesson: Lesson) -> str:
    return f"/admin/lessons/lesson/{lesson.pk}/change/"


def blocks(html: str, prefix: str) -> list[str]:
    """The position each block of an inline shows, stored and empty ones alike, in page order."""
    return re.findall(rf'name="{prefix}-\d+-position" value="(\d*)"', html)


def test_a_draft_comes_back_with_its_eight_question_and_four_flashcard_blocks(editor_client):
    response = editor_client.post("/admin/lessons/lesson/add/", title_only(make_area()))
    assert response.status_code == 302, response.content.decode()[:2000]
    draft = Lesson.objects.get()
    html = editor_client.get(change_url(draft)).content.decode()
    assert blocks(html, "questions") == [str(n) for n in range(1, 9)]
    assert blocks(html, "flashcards") == ["1", "2", "3", "4"]

    data = change_page_data(editor_client, draft) | {
        "questions-0-prompt": "Which star is brightest?",
        "questions-0-choice_0_text": "Sirius",
        "questions-0-choice_0_correct": "on",
        "flashcards-0-front": "Brightest star",
        "flashcards-0-back": "Sirius",
    }
    response = editor_client.post(change_url(draft), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    html = editor_client.get(change_url(draft)).content.decode()
    # One of each written: the blocks still make eight questions and four flashcards.
    assert blocks(html, "questions") == [str(n) for n in range(1, 9)]
    assert blocks(html, "flashcards") == ["1", "2", "3", "4"]
    assert draft.questions.count() == 1 and draft.flashcards.count() == 1


def test_a_published_lesson_shows_only_its_own_blocks(editor_client, demo):
    html = editor_client.get(change_url(demo)).content.decode()
    assert len(blocks(html, "questions")) == 8
    assert len(blocks(html, "flashcards")) == demo.flashcards.count()


def test_flashcards_added_at_one_position_are_saved_in_the_order_written(editor_client, demo):
    """What the page sent before its script numbered new rows: every new card at position 1."""
    stored = demo.flashcards.count()
    data = change_page_data(editor_client, demo)
    data["flashcards-TOTAL_FORMS"] = str(stored + 3)
    for n, word in enumerate(["first", "second", "third"], start=stored):
        data |= {
            f"flashcards-{n}-position": "1",
            f"flashcards-{n}-front": f"The {word} new card",
            f"flashcards-{n}-back": "Its back",
        }
    response = editor_client.post(change_url(demo), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    positions = list(demo.flashcards.values_list("position", flat=True))
    assert positions == list(range(1, stored + 4))
    assert [card.front for card in demo.flashcards.all()][-3:] == [
        "The first new card",
        "The second new card",
        "The third new card",
    ]


def test_two_stored_flashcards_cannot_be_moved_to_one_place(editor_client, demo):
    data = change_page_data(editor_client, demo) | {"flashcards-1-position": "1"}
    response = editor_client.post(change_url(demo), data)
    assert response.status_code == 200
    assert "Two flashcards are at position 1. Give each its own place." in response.content.decode()
    assert list(demo.flashcards.values_list("position", flat=True)) == list(
        range(1, demo.flashcards.count() + 1)
    )


def test_save_as_a_new_draft_copies_the_page_with_new_keys(editor_client, demo):
    answer(Client(), demo, right=True)
    memories = Memory.objects.count()
    data = change_page_data(editor_client, demo) | {
        "_saveasnew": "Save as a new draft",
        "title": "Many Devices, for younger readers",
    }
    response = editor_client.post(change_url(demo), data, follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert "This is a new draft, copied from the page you were editing" in html
    copy = Lesson.objects.get(title="Many Devices, for younger readers")
    assert response.redirect_chain[-1][0] == change_url(copy)
    assert copy.status == Lesson.Status.DRAFT and copy.public_id != demo.public_id
    demo.refresh_from_db()
    assert demo.status == Lesson.Status.PUBLISHED
    assert demo.title == "Training Across Many Devices: Data, Model and Pipeline Parallelism"

    old_questions = list(demo.questions.all())
    new_questions = list(copy.questions.all())
    assert [q.prompt for q in new_questions] == [q.prompt for q in old_questions]
    assert not {q.key for q in new_questions} & {q.key for q in old_questions}
    old_choice_ids = {c["id"] for q in old_questions for c in q.choices}
    assert not {c["id"] for q in new_questions for c in q.choices} & old_choice_ids
    assert [c.front for c in copy.flashcards.all()] == [c.front for c in demo.flashcards.all()]
    assert not {c.key for c in copy.flashcards.all()} & {c.key for c in demo.flashcards.all()}
    # Learners' history stays with the lesson they answered.
    assert Memory.objects.count() == memories
    assert not Memory.objects.filter(question__lesson=copy).exists()
    assert 'value="Save as a new draft"' in editor_client.get(change_url(copy)).content.decode()


def filter_links(html: str) -> int:
    sidebar = html[html.index('<search id="changelist-filter"') :]
    return len(re.findall(r"<a href=", sidebar[: sidebar.index("</search>")]))


def test_lists_keep_their_filters_short_at_catalogue_scale(editor_client, demo):
    add_lessons(1250)
    for url in (
        "/admin/lessons/question/",
        "/admin/lessons/problemreport/",
        "/admin/lessons/lesson/",
    ):
        html = editor_client.get(url).content.decode()
        assert filter_links(html) <= 100, url
    question_list = editor_client.get("/admin/lessons/question/").content.decode()
    assert "Type a lesson's title or id" in question_list
    assert "admin/js/autocomplete.js" in question_list


def test_the_area_filter_lists_the_chosen_subjects_areas_once_there_are_many(editor_client, demo):
    subject = Subject.objects.create(name="Astronomy", slug="astronomy", position=5)
    for n in range(40):
        Area.objects.create(subject=subject, name=f"Region {n:02d}", slug=f"region-{n}")
    unfiltered = editor_client.get("/admin/lessons/question/").content.decode()
    assert "Region 00" not in unfiltered  # 41 areas: too many to list without a subject
    chosen = editor_client.get(
        "/admin/lessons/question/", {"lesson__subject__id__exact": demo.subject_id}
    ).content.decode()
    assert "Region 00" not in chosen and str(demo.area) in chosen
    by_area = editor_client.get(
        "/admin/lessons/question/",
        {"lesson__subject__id__exact": demo.subject_id, "lesson__area": demo.area_id},
    )
    in_area = Question.objects.filter(lesson__area=demo.area).count()
    assert f"{in_area} questions" in by_area.content.decode()
    assert in_area < Question.objects.count()


def test_the_lesson_filter_finds_a_lesson_by_typing_and_filters_by_it(editor_client, demo):
    other = make_lesson(area=demo.area, title="Counting Stars", slug="counting-stars")
    found = editor_client.get(
        "/admin/autocomplete/",
        {"app_label": "lessons", "model_name": "question", "field_name": "lesson", "term": "Coun"},
    ).json()
    assert [row["text"] for row in found["results"]] == ["Counting Stars"]
    listing = editor_client.get(
        "/admin/lessons/question/", {"lesson__id__exact": other.pk, "q": ""}
    ).content.decode()
    assert "8 questions" in listing and f'<option value="{other.pk}" selected>' in listing
    # A lesson id that is not a number filters nothing, and says nothing went wrong.
    odd = editor_client.get("/admin/lessons/question/", {"lesson__id__exact": "x'; --"})
    assert odd.status_code == 200
    assert f"{Question.objects.count()} questions" in odd.content.decode()


def test_question_search_finds_choices_reasons_and_lesson_ids(editor_client, demo):
    question = demo.questions.get(position=2)
    wrong = next(c for c in question.choices if not c["correct"])
    for term in (wrong["text"][:30], wrong["explanation"][:30], demo.public_id):
        listing = editor_client.get("/admin/lessons/question/", {"q": term}).content.decode()
        assert question.prompt[:40] in listing, term
    nothing = editor_client.get("/admin/lessons/question/", {"q": "zebra crossing"})
    assert "0 questions" in nothing.content.decode()


def test_report_search_finds_messages_and_lesson_ids(editor_client, demo):
    ProblemReport.objects.create(lesson=demo, kind="wrong_fact", message="The sum looks off")
    for term in ("sum looks", demo.public_id):
        listing = editor_client.get("/admin/lessons/problemreport/", {"q": term})
        assert "The sum looks off" in listing.content.decode(), term


def test_lesson_search_finds_a_lesson_by_its_id(editor_client, demo):
    listing = editor_client.get("/admin/lessons/lesson/", {"q": demo.public_id})
    assert demo.title in listing.content.decode()


def test_a_lesson_file_with_two_flashcards_in_one_place_is_refused(demo, tmp_path):
    path = export(tmp_path) / f"{demo.public_id}.md"
    text = path.read_text().replace("::: flashcard 2 ", "::: flashcard 1 ", 1)
    path.write_text(text)
    second = text[: text.index("::: flashcard 1 ", text.index("::: flashcard 1 ") + 1)]
    line = second.count("\n") + 1
    message = refused(tmp_path, "--check")
    assert f"{path.name}:{line}: flashcard 1: position 1 is already used on line" in message
    assert list(demo.flashcards.values_list("position", flat=True)) == list(
        range(1, demo.flashcards.count() + 1)
    )


def test_lesson_search_reads_published_text_through_the_index_and_drafts_by_title(
    editor_client, demo
):
    assert "bubble" not in (demo.title + demo.summary).lower()
    draft = make_lesson(
        area=demo.area, title="Bubble Sort", slug="bubble-sort", status=Lesson.Status.DRAFT
    )
    hidden = make_lesson(
        area=demo.area, title="Quiet Draft", slug="quiet-draft", status=Lesson.Status.DRAFT
    )
    Lesson.objects.filter(pk=hidden.pk).update(body="A bubble rises.")
    listing = editor_client.get("/admin/lessons/lesson/", {"q": "bubble"}).content.decode()
    assert demo.title in listing  # published: found by a word of its lesson text
    assert draft.title in listing  # a draft: found by its title, as Django searches
    assert "Quiet Draft" not in listing  # drafts are not in the index
    assert "Message Passing" not in listing


def test_question_search_reads_published_questions_through_the_index(editor_client, demo):
    """No question's text holds "microbatching"; the index, which stems, finds the demo
    lesson's questions by "microbatches". A lesson with the word only in its text is not a
    question hit."""
    term = "microbatching"
    assert not Question.objects.filter(prompt__icontains=term).exists()
    make_lesson(area=demo.area, title="Other", slug="other", body="All about microbatching.")
    lessons = editor_client.get("/admin/lessons/lesson/", {"q": term}).content.decode()
    assert "Other" in lessons and demo.title in lessons
    listing = editor_client.get("/admin/lessons/question/", {"q": term}).content.decode()
    found = demo.questions.filter(retired_at__isnull=True).count()
    assert f"{found} questions" in listing
    assert demo.questions.get(position=1).prompt[:40] in listing
    nothing = editor_client.get("/admin/lessons/question/", {"q": "microbatching -stage"})
    assert "0 questions" in nothing.content.decode()
