"""A lesson's history: a revision per admin save and per import, a readable diff between any
two, and a restore that goes through an import's checks."""

from __future__ import annotations

import html as html_module
import io
import re

from django.contrib.admin.models import LogEntry
from django.core.management import call_command
from django.test import Client

from lessons.models import Flashcard, Lesson, LessonRevision, Question
from practice.models import Learner, Memory, Review
from tests.factories import make_lesson, make_question
from tests.lessons.test_admin import change_page_data, move_right_answer, question_page_data
from tests.practice.helpers import answer


def retitle(editor_client, lesson: Lesson, title: str):  # noqa: F811
    data = change_page_data(editor_client, lesson) | {"title": title}
    response = editor_client.post(f"/admin/lessons/lesson/{lesson.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return response


def test_every_import_and_every_admin_save_keeps_a_revision(editor_client, demo):  # noqa: F811
    first = demo.revisions.get()  # load_demo imports the lesson files
    assert (first.source, first.author, first.by) == ("import", None, "the command line")
    assert f'title: "{demo.title}"' in first.text

    retitle(editor_client, demo, "Many Devices, One Model")
    latest = demo.revisions.first()
    assert (latest.source, latest.author.username) == ("admin", "ada")
    assert 'title: "Many Devices, One Model"' in latest.text
    assert demo.revisions.count() == 2

    retitle(editor_client, demo, "Many Devices, One Model")  # a save that changes nothing
    assert demo.revisions.count() == 2

    question = demo.questions.get(position=2)
    page = editor_client.get(f"/admin/lessons/question/{question.pk}/change/")
    data = {
        field.html_name: field.value()
        for field in page.context["adminform"].form
        if field.value() not in (None, False)
    } | {"prompt": "Which split keeps each device's memory smallest?"}
    response = editor_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert "keeps each device's memory smallest" in demo.revisions.first().text
    assert demo.revisions.count() == 3


def test_an_import_from_the_command_line_keeps_a_revision(demo, tmp_path):
    call_command("export_lessons", str(tmp_path), stdout=io.StringIO())
    path = tmp_path / f"{demo.public_id}.md"
    path.write_text(path.read_text().replace(demo.title, "Retitled by a file"))
    call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    latest = demo.revisions.first()
    assert latest.source == "import" and 'title: "Retitled by a file"' in latest.text
    assert demo.revisions.count() == 2


def test_a_lesson_from_before_history_keeps_its_earlier_state(editor_client, db):  # noqa: F811
    lesson = make_lesson(title="Before History")
    retitle(editor_client, lesson, "After History")
    earlier, saved = lesson.revisions.order_by("created_at", "pk")
    assert earlier.source == "earlier" and 'title: "Before History"' in earlier.text
    assert saved.source == "admin" and 'title: "After History"' in saved.text


def test_the_history_lists_revisions_and_the_diff_reads_line_by_line(editor_client, demo):  # noqa: F811
    old_title = demo.title
    retitle(editor_client, demo, "Many Devices, One Model")
    newer, older = demo.revisions.all()
    history = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/history/").content.decode()
    assert "Revisions" in history and "Saved in the admin" in history
    diff_url = f"/admin/lessons/lesson/{demo.pk}/revisions/{newer.pk}/"
    assert f'href="{diff_url}"' in history
    assert f'href="{diff_url}restore/"' not in history  # the latest is the lesson now
    assert f'href="/admin/lessons/lesson/{demo.pk}/revisions/{older.pk}/restore/"' in history

    page = editor_client.get(diff_url)
    assert page.status_code == 200
    html = page.content.decode()
    assert f'<span class="diff-del">-title: &quot;{old_title}&quot;\n</span>' in html
    assert '<span class="diff-add">+title: &quot;Many Devices, One Model&quot;\n</span>' in html
    assert '<span class="diff-hunk">At line 4:\n</span>' in html  # the title is on line 4
    assert "+revision: " not in html  # the fingerprint line changes, but says nothing
    # Any two revisions, either way round: the older one is always "before".
    both_ways = editor_client.get(
        f"/admin/lessons/lesson/{demo.pk}/revisions/{older.pk}/", {"against": newer.pk}
    ).content.decode()
    assert '<span class="diff-add">+title: &quot;Many Devices' in both_ways


def test_a_bad_revision_address_is_refused_with_a_message(editor_client, demo):  # noqa: F811
    other = make_lesson(slug="other", title="Other")
    retitle(editor_client, other, "Other, retitled")
    revision = demo.revisions.get()
    base = f"/admin/lessons/lesson/{demo.pk}/revisions/"
    for against in ("nine", "99999999", str(other.revisions.first().pk)):
        page = editor_client.get(f"{base}{revision.pk}/", {"against": against})
        assert page.status_code == 400
        assert "is not a revision of this lesson" in page.content.decode()
    elsewhere = other.revisions.first().pk
    for url in (f"{base}{elsewhere}/", f"{base}{elsewhere}/restore/"):
        missing = editor_client.get(url)
        assert missing.status_code == 404 and "no such revision" in missing.content.decode()
    assert Client().get(f"{base}{revision.pk}/").status_code == 302  # to the admin's log-in


def test_restoring_a_revision_shows_the_changes_then_restores_through_the_import(
    editor_client,  # noqa: F811
    demo,
):
    old_title = demo.title
    retitle(editor_client, demo, "Many Devices, One Model")
    older = demo.revisions.last()
    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{older.pk}/restore/"
    preview = editor_client.get(url)
    assert preview.status_code == 200
    html = preview.content.decode()
    assert f'<span class="diff-add">+title: &quot;{old_title}&quot;' in html
    demo.refresh_from_db()
    assert demo.title == "Many Devices, One Model"  # looking changes nothing

    response = editor_client.post(url)
    assert response.status_code == 302
    said = editor_client.get(response["Location"]).content.decode()
    message = re.search(r"Restored the revision of \d+ \w{3} \d{4}, [^<]*", said)
    assert message and ".." not in message[0], message
    demo.refresh_from_db()
    assert demo.title == old_title
    restored = demo.revisions.first()
    assert (restored.source, restored.author.username) == ("restore", "ada")
    assert restored.note.startswith("Restored the revision of")
    # Said as the History says a moment ("6 Dec 2026, 7:25 p.m."), not as a timestamp.
    assert re.fullmatch(r"Restored the revision of \d+ \w{3} \d{4}, .*", restored.note)
    assert LogEntry.objects.filter(object_id=str(demo.pk), user__username="ada").count() == 2


def test_a_restore_that_would_delete_answered_questions_asks_first(editor_client, db):  # noqa: F811
    lesson = make_lesson(status=Lesson.Status.DRAFT, questions=2)
    retitle(editor_client, lesson, "Two Questions")
    two = lesson.revisions.first()
    third = make_question(lesson, position=3)
    retitle(editor_client, lesson, "Three Questions")
    Review.objects.create(
        learner=Learner.objects.create(),
        lesson=lesson,
        question=third,
        attempt="a",
        rating=3,
        reviewed_at=third.lesson.updated_at,
        answer=sorted(third.correct_ids)[0],
        correct=True,
    )
    url = f"/admin/lessons/lesson/{lesson.pk}/revisions/{two.pk}/restore/"
    html = editor_client.get(url).content.decode()
    assert f"(key {third.key}) is left out and has 1 answer from 1 learner: retire it" in html
    # Asked in words, with what keeps learners' answers chosen; no command-line advice.
    assert 'name="missing" value="retire" id="id_missing_retire" checked' in html
    assert "--allow" not in html and "import with" not in html
    lesson.refresh_from_db()
    assert lesson.title == "Three Questions" and lesson.questions.count() == 3

    assert editor_client.post(url, {"missing": "retire"}).status_code == 302
    lesson.refresh_from_db()
    assert lesson.title == "Two Questions" and lesson.questions.count() == 2
    assert Question.everything.get(pk=third.pk).retired_at is not None
    assert Review.objects.filter(question_id=third.pk).count() == 1  # kept with it


def test_a_restore_may_delete_an_answered_question_when_the_editor_says_so(editor_client, db):  # noqa: F811
    lesson = make_lesson(status=Lesson.Status.DRAFT, questions=2)
    retitle(editor_client, lesson, "Two Questions")
    two = lesson.revisions.first()
    third = make_question(lesson, position=3)
    retitle(editor_client, lesson, "Three Questions")
    Review.objects.create(
        learner=Learner.objects.create(), lesson=lesson, question=third, attempt="a", rating=3,
        reviewed_at=third.lesson.updated_at, answer=sorted(third.correct_ids)[0], correct=True,
    )  # fmt: skip
    url = f"/admin/lessons/lesson/{lesson.pk}/revisions/{two.pk}/restore/"
    assert editor_client.post(url, {"missing": "delete"}).status_code == 302
    assert not Question.everything.filter(pk=third.pk).exists()
    assert not Review.objects.filter(question_id=third.pk).exists()


def test_a_restore_leaving_out_an_answered_flashcard_says_what_keeps_it(editor_client, db):  # noqa: F811
    """The page told the editor to put the card "back in the file", and a restore has none."""
    lesson = make_lesson(status=Lesson.Status.DRAFT, questions=2, flashcards=0)
    retitle(editor_client, lesson, "No Cards")
    before = lesson.revisions.first()
    card = Flashcard.objects.create(lesson=lesson, position=1, front="Front", back="Back")
    retitle(editor_client, lesson, "One Card")
    Review.objects.create(
        learner=Learner.objects.create(), lesson=lesson, flashcard=card, attempt="a", rating=3,
        reviewed_at=lesson.updated_at,
    )  # fmt: skip
    url = f"/admin/lessons/lesson/{lesson.pk}/revisions/{before.pk}/restore/"
    page = html_module.unescape(editor_client.get(url).content.decode())
    assert (
        "A flashcard cannot be retired, and this revision does not have it: to keep learners' "
        "answers, cancel."
    ) in page
    assert "in the file" not in page


def test_a_restore_that_breaks_the_publish_rule_is_refused(editor_client, db):  # noqa: F811
    lesson = make_lesson(status=Lesson.Status.DRAFT, questions=7)
    retitle(editor_client, lesson, "Seven Questions")
    seven = lesson.revisions.first()
    make_question(lesson, position=8)
    data = change_page_data(editor_client, lesson) | {"status": "published"}
    assert editor_client.post(f"/admin/lessons/lesson/{lesson.pk}/change/", data).status_code == 302
    text = seven.text.replace('status: "draft"', 'status: "published"')
    LessonRevision.objects.filter(pk=seven.pk).update(text=text)
    url = f"/admin/lessons/lesson/{lesson.pk}/revisions/{seven.pk}/restore/"
    assert "needs exactly 8 questions" in editor_client.get(url).content.decode()
    assert editor_client.post(url, {"allow_delete": "yes"}).status_code == 400
    assert Lesson.objects.get(pk=lesson.pk).questions.count() == 8


def test_revisions_are_capped_per_lesson(editor_client, demo, monkeypatch):  # noqa: F811
    monkeypatch.setattr(LessonRevision, "KEPT_PER_LESSON", 3)
    for n in range(5):
        retitle(editor_client, demo, f"Title {n}")
    kept = list(demo.revisions.values_list("text", flat=True))
    assert len(kept) == 3
    assert 'title: "Title 4"' in kept[0] and 'title: "Title 2"' in kept[2]


def test_a_restore_that_changes_a_right_answer_asks_about_learners_memory(editor_client, demo):  # noqa: F811
    answer(Client(), demo, right=True)  # one learner remembers question 1
    question = demo.questions.get(position=1)
    right_before = question.correct_ids
    imported = demo.revisions.get()
    data = question_page_data(editor_client, question)
    move_right_answer(data, question)
    page = f"/admin/lessons/question/{question.pk}/change/"
    assert editor_client.post(page, data | {"_memory": "keep"}).status_code == 302
    assert demo.revisions.count() == 2

    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{imported.pk}/restore/"
    html = editor_client.get(url).content.decode()
    assert "the right answer changes from" in html and "1 learner remembers it" in html
    # The editor kept their memory when they saved: the restore keeps it unless told otherwise.
    assert 'name="memories" value="keep" id="id_memories_keep" checked' in html
    assert editor_client.post(url, {"memories": "keep"}).status_code == 302
    question.refresh_from_db()
    assert question.correct_ids == right_before
    assert Memory.objects.filter(question=question).count() == 1


def test_an_upload_in_the_admin_and_a_question_deleted_there_keep_revisions(editor_client, db):  # noqa: F811
    from lessons.files import lesson_to_markdown

    lesson = make_lesson(status=Lesson.Status.DRAFT, questions=3)
    text = lesson_to_markdown(lesson).replace("Look up", "Look up, slowly")
    applied = editor_client.post(
        "/admin/lessons/lesson/upload/", {"name": "l.md", "text": text, "apply": "yes"}
    )
    assert applied.status_code == 302
    uploaded = lesson.revisions.first()
    assert (uploaded.source, uploaded.author.username) == ("import", "ada")
    assert "Look up, slowly" in uploaded.text

    third = lesson.questions.get(position=3)
    url = f"/admin/lessons/question/{third.pk}/delete/"
    assert editor_client.post(url, {"post": "yes"}).status_code == 302
    latest = lesson.revisions.first()
    assert latest.source == "admin" and "::: question 3" not in latest.text
    assert "::: question 3" in uploaded.text


def test_a_revision_from_before_a_reorder_restores_the_order_too(editor_client, demo):  # noqa: F811
    """Restoring any revision older than a reorder was refused: "Reorder questions in the admin,
    not in files", said to an editor who had written no file (outside editor review). Learners
    keep their memory of each question, which moves with it."""
    first, second = demo.questions.get(position=1), demo.questions.get(position=2)
    answer(Client(), demo, right=True)  # remembers question 1
    retitle(editor_client, demo, "Many Devices, One Model")
    before_the_reorder = demo.revisions.first()
    data = change_page_data(editor_client, demo)
    data["questions-0-position"], data["questions-1-position"] = "2", "1"
    response = editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{before_the_reorder.pk}/restore/"
    preview = editor_client.get(url).content.decode()
    assert "Reorder questions in the admin" not in preview
    assert f"question {first.key} will move from position 2 to 1" in preview
    response = editor_client.post(url)
    assert response.status_code == 302, response.content.decode()[:3000]
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.position, second.position) == (1, 2)
    assert Memory.objects.get().question == first


def test_a_restore_that_sets_a_practised_lesson_back_to_draft_asks_first(editor_client, demo):  # noqa: F811
    answer(Client(), demo, right=True)
    imported = demo.revisions.get()
    text = imported.text.replace('status: "published"', 'status: "draft"')
    LessonRevision.objects.filter(pk=imported.pk).update(text=text)
    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{imported.pk}/restore/"
    html = editor_client.get(url).content.decode()
    assert "1 learner practises it, and it leaves their sky" in html
    assert 'name="unpublish" value="draft" id="id_unpublish_draft">' in html  # not ticked

    refused = editor_client.post(url, {})
    assert refused.status_code == 400
    told = "Nothing was changed: tick the box to set the lesson back to draft"
    assert told in refused.content.decode()
    assert Lesson.objects.get(pk=demo.pk).status == Lesson.Status.PUBLISHED

    assert editor_client.post(url, {"unpublish": "draft"}).status_code == 302
    assert Lesson.objects.get(pk=demo.pk).status == Lesson.Status.DRAFT


def test_a_restore_says_nothing_of_the_subjects_texts_it_leaves(editor_client, demo):  # noqa: F811
    """A restore brings back its lesson, never its subject's texts: its plan said the file's
    subject description differed, advising a command-line flag (second review of stop 69)."""
    demo.subject.description = "A description edited since"
    demo.subject.save()
    retitle(editor_client, demo, "Many Devices, One Model")
    imported = demo.revisions.last()
    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{imported.pk}/restore/"
    html = html_module.unescape(editor_client.get(url).content.decode())
    assert "will change: title" in html
    assert "differs from the site's" not in html and "--update-subjects" not in html
    editor_client.post(url)
    assert "Restored the revision" in html_module.unescape(
        editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    )
