"""The lesson form that guides: drafts from a title, the publish checklist, positions filled in,
Markdown previews, inline Markdown for learners, and two editors saving the same lesson."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.test import Client

from lessons.models import Area, Flashcard, Lesson
from tests.factories import make_area
from tests.lessons.test_admin import change_page_data, management_form, new_lesson_form

PREVIEW = "/admin/lessons/lesson/markdown-preview/"


def signed_in_editor(name: str) -> Client:
    call_command("create_editor", name, "--password", "a-long-password", stdout=io.StringIO())
    client = Client()
    client.force_login(User.objects.get(username=name))
    return client


def title_only(area, **extra) -> dict:
    """What the add page sends when only the title, subject and area are filled in: the eight
    question blocks and four flashcards are left as they came, with their positions."""
    data = {
        "title": "Reading the Night Sky",
        "status": "draft",
        "subject": str(area.subject_id),
        "area": str(area.pk),
    }
    data |= management_form("questions", 8, 0) | management_form("flashcards", 4, 0)
    data |= {f"questions-{i}-position": str(i + 1) for i in range(8)}
    data |= {f"flashcards-{i}-position": str(i + 1) for i in range(4)}
    return data | extra


def checklist(html: str) -> str:
    start = html.index('id="publish-checklist"')
    return html[start : html.index("</section>", start)]


def test_the_add_page_fills_in_every_position(editor_client):
    html = editor_client.get("/admin/lessons/lesson/add/").content.decode()
    for i in range(8):
        assert f'name="questions-{i}-position" value="{i + 1}"' in html
    for i in range(4):
        assert f'name="flashcards-{i}-position" value="{i + 1}"' in html


def test_a_draft_saves_from_its_title_subject_and_area_alone(editor_client):
    area = make_area()
    response = editor_client.post("/admin/lessons/lesson/add/", title_only(area))
    assert response.status_code == 302, response.content.decode()[:3000]
    draft = Lesson.objects.get()
    assert (draft.title, draft.slug, draft.status) == (
        "Reading the Night Sky",
        "reading-the-night-sky",
        "draft",
    )
    assert draft.age_from is None and not draft.questions.exists()
    assert editor_client.get(draft.get_absolute_url()).status_code == 200  # the staff preview
    html = checklist(
        editor_client.get(f"/admin/lessons/lesson/{draft.pk}/change/").content.decode()
    )
    assert "What publishing still needs" in html and "0 of 9 done." in html
    assert '<a href="#id_summary">' in html and "The lesson has no summary." in html
    assert "A published lesson needs exactly 8 questions; it has 0." in html
    assert "A published lesson needs at least 4 flashcards; it has 0." in html


def test_a_title_alone_cannot_be_published(editor_client):
    area = make_area()
    response = editor_client.post(
        "/admin/lessons/lesson/add/", title_only(area, status="published")
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "The lesson has no summary." in html and "The lesson has no recap." in html
    assert "A published lesson needs at least 4 flashcards; it has 0." in html
    assert not Lesson.objects.exists()


def test_the_checklist_of_a_published_lesson_says_it_is_published(editor_client, demo):
    page = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    assert "Published: every line holds" in checklist(page)
    Lesson.objects.filter(pk=demo.pk).update(status=Lesson.Status.DRAFT)
    page = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    assert "Ready to publish" in checklist(page)


def test_each_line_of_the_checklist_links_to_its_place(editor_client, demo):
    third = demo.questions.get(position=3)
    wrong = next(c for c in third.labelled_choices if not c["correct"])
    third.choices = [
        c | {"explanation": ""} if c["id"] == wrong["id"] else c for c in third.choices
    ]
    third.save()
    Lesson.objects.filter(pk=demo.pk).update(recap="", age_to=None)
    kept = list(demo.flashcards.values_list("pk", flat=True)[:3])
    Flashcard.objects.filter(lesson=demo).exclude(pk__in=kept).delete()
    page = editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode()
    html = checklist(page)
    assert "Ready to publish" not in html
    todo = re.findall(r'<li class="todo"><a href="#([^"]+)">.*?</a>(.*?)</li>', html)
    assert todo == [
        ("id_age_from", " The lesson does not say which ages it is for (from and to)."),
        ("id_recap", " The lesson has no recap."),
        ("questions-2", f" Question 3 has no “why wrong” for choice {wrong['letter']}."),
        ("flashcards-group", " A published lesson needs at least 4 flashcards; it has 3."),
    ]
    assert html.count('<li class="done">') == 13
    # every anchor names a place on the page
    for anchor in re.findall(r'<a href="#([^"]+)">', html):
        assert f'id="{anchor}"' in page, anchor


def test_publishing_is_refused_until_the_checklist_is_clean(editor_client):
    area = make_area()
    data = new_lesson_form(area)
    refused = {
        "questions-1-choice_1_why": "",  # a wrong choice without its "why wrong"
        "summary": "",
        "age_from": "",
        "flashcards-TOTAL_FORMS": "3",
    }
    response = editor_client.post("/admin/lessons/lesson/add/", data | refused)
    html = response.content.decode()
    assert response.status_code == 200 and not Lesson.objects.exists()
    for message in (
        "Question 2 has no “why wrong” for choice B.",
        "The lesson has no summary.",
        "The lesson does not say which ages it is for (from and to).",
        "A published lesson needs at least 4 flashcards; it has 3.",
    ):
        assert message in checklist(html), message
        assert html.count(message) >= 2, message  # in the checklist and beside its place
    # one fix at a time: still refused while any line is open
    response = editor_client.post(
        "/admin/lessons/lesson/add/", data | {"flashcards-TOTAL_FORMS": "3"}
    )
    assert response.status_code == 200 and not Lesson.objects.exists()
    response = editor_client.post("/admin/lessons/lesson/add/", data)
    assert response.status_code == 302
    assert Lesson.objects.get().is_published


def test_the_item_checks_share_the_checklist(editor_client, demo):
    question = demo.questions.get(position=4)
    question.choices = [
        {**c, "text": "None of the above"} if i == 0 else c for i, c in enumerate(question.choices)
    ]
    question.save()
    html = checklist(editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode())
    assert "Item-writing checks" in html
    assert re.search(r'<a href="#questions-3"><strong>Question 4:</strong> Choice A says', html)


def test_a_question_left_without_a_position_takes_the_next_free_place(editor_client):
    area = make_area()
    data = new_lesson_form(area, status="draft", questions=3) | {"questions-2-position": ""}
    response = editor_client.post("/admin/lessons/lesson/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    lesson = Lesson.objects.get()
    assert sorted(lesson.questions.values_list("position", flat=True)) == [1, 2, 3]


def test_questions_reorder_by_their_position_fields_without_javascript(editor_client, demo):
    before = dict(demo.questions.values_list("position", "pk"))
    data = change_page_data(editor_client, demo)
    # 1 → 3, 2 → 1, 3 → 2: a rotation, not just a swap
    moves = {"1": "3", "2": "1", "3": "2"}
    for i in range(8):
        position = data[f"questions-{i}-position"]
        data[f"questions-{i}-position"] = moves.get(str(position), str(position))
    response = editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    after = dict(demo.questions.values_list("position", "pk"))
    assert (after[3], after[1], after[2]) == (before[1], before[2], before[3])


def test_a_blank_new_question_that_only_moved_is_still_blank(editor_client):
    area = make_area()
    data = title_only(area) | {"questions-0-position": "5", "questions-4-position": "1"}
    response = editor_client.post("/admin/lessons/lesson/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert not Lesson.objects.get().questions.exists()


def test_each_text_field_says_what_it_takes(editor_client):
    html = editor_client.get("/admin/lessons/lesson/add/").content.decode()
    for field, note in (
        ("summary", "Plain text."),
        ("body", "Markdown: **bold**"),
        ("questions-0-prompt", "Inline Markdown: `code`"),
        ("questions-0-choice_0_text", "Inline Markdown: `code`"),
    ):
        assert re.search(rf'id="id_{field}_helptext">\s*<div>{re.escape(note)}', html), field
    assert 'data-hx-post="/admin/lessons/lesson/markdown-preview/"' in html


def test_the_preview_renders_markdown_and_reports_what_will_not_show(editor_client):
    response = editor_client.post(
        PREVIEW, {"format": "block", "text": "Use **caches**.\n\n![A diagram](http://x/y.png)"}
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<strong>caches</strong>" in html
    assert "An image (“A diagram”) is dropped, with its text" in html
    response = editor_client.post(PREVIEW, {"format": "inline", "text": "Is `key` <sub>2</sub>?"})
    html = response.content.decode()
    assert "<code>key</code>" in html and "&lt;sub&gt;" in html and "<p>" not in html
    assert "HTML (&lt;sub&gt;) is shown as typed" in html
    assert "<html" not in html  # a fragment for htmx to swap in


def test_the_preview_is_for_editors_only(editor_client, db):
    anonymous = Client().post(PREVIEW, {"format": "block", "text": "x"})
    assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
    learner = Client()
    learner.force_login(User.objects.create_user("lou", password="a-long-password"))
    assert learner.post(PREVIEW, {"format": "block", "text": "x"}).status_code == 302
    staff = User.objects.create_user("sam", password="a-long-password", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_lesson"))
    viewer = Client()
    viewer.force_login(staff)
    assert viewer.post(PREVIEW, {"format": "block", "text": "x"}).status_code == 403


@pytest.mark.parametrize(
    ("method", "data", "status", "message"),
    [
        ("get", {}, 405, ""),
        ("post", {"format": "latex", "text": "x"}, 400, "Cannot preview this: format"),
        ("post", {"text": "x"}, 400, "Cannot preview this: format"),
        ("post", {"format": "block", "text": "x" * 100_001}, 400, "at most 100000 characters"),
    ],
)
def test_bad_preview_requests_get_a_clear_4xx(editor_client, method, data, status, message):
    response = getattr(editor_client, method)(PREVIEW, data)
    assert response.status_code == status
    assert message in response.content.decode()


def test_a_preview_over_the_form_limit_is_told_in_the_preview(editor, settings):
    """Django refuses a form over DATA_UPLOAD_MAX_MEMORY_SIZE where the CSRF check first reads
    it, before the view: a browser's request (CSRF checked) gets the admin's own message."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(editor)
    browser.get("/admin/")
    token = browser.cookies["csrftoken"].value
    text = "€" * 90_000  # under the preview's 100,000 characters, over 256 KB as UTF-8
    response = browser.post(
        PREVIEW, {"format": "block", "text": text}, headers={"X-CSRFToken": token}
    )
    assert response.status_code == 400
    assert response.content.decode() == (
        '<p class="errornote">Cannot do this: the form sent more than the 256 KB of text a form '
        "may send.</p>"
    )


def test_prompts_choices_and_flashcards_show_inline_markdown_to_learners(editor_client, demo):
    first = demo.questions.get(position=1)
    first.prompt = "Which `cache` key is **kept**? <img src=x onerror=alert(1)>"
    right = next(i for i, c in enumerate(first.choices) if c["correct"])
    first.choices[right]["text"] = "The *versioned* one"
    first.save()
    card = demo.flashcards.first()
    card.front = "What does `TTL` mean?"
    card.save()
    page = Client().get(demo.get_absolute_url() + "/practice").content.decode()
    assert "Which <code>cache</code> key is <strong>kept</strong>?" in page
    assert "The <em>versioned</em> one" in page
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    cards = Client().get(demo.get_absolute_url() + "/flashcards").content.decode()
    assert "What does <code>TTL</code> mean?" in cards
    # the Markdown twin keeps them as Markdown, with the HTML made harmless
    twin = Client().get(demo.get_absolute_url() + ".md").content.decode()
    assert "Which `cache` key is **kept**? \\<img src=x onerror=alert(1)>" in twin
    # and the editor is told the HTML is shown as typed, with a link to the prompt
    html = checklist(editor_client.get(f"/admin/lessons/lesson/{demo.pk}/change/").content.decode())
    assert (
        '<a href="#id_questions-0-prompt"><strong>Question 1, prompt:</strong> '
        "HTML (&lt;img src=x onerror=alert(1)&gt;) is shown as typed"
    ) in html


def test_an_image_in_the_body_is_reported_when_saved(editor_client, demo):
    data = change_page_data(editor_client, demo)
    data["body"] += "\n\n![A cache diagram](https://example.org/cache.png)"
    response = editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data, follow=True)
    html = response.content.decode()
    assert "Saved, but some markup will not show as written: Body: An image" in html
    assert "“A cache diagram”" in html


def test_the_second_of_two_editors_is_told_and_shown_the_difference(demo):
    ada, bob = signed_in_editor("ada"), signed_in_editor("bob")
    url = f"/admin/lessons/lesson/{demo.pk}/change/"
    ada_form, bob_form = change_page_data(ada, demo), change_page_data(bob, demo)
    ada_form["summary"] = "Ada's better summary."
    assert ada.post(url, ada_form).status_code == 302
    bob_form["heading"] = "Bob's heading"
    response = bob.post(url, bob_form)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Someone else saved this lesson after you opened it" in html
    assert '<a href="#lesson-conflict">See what they changed</a>' in html
    assert 'id="lesson-conflict"' in html and "ada saved it on" in html
    # On the first screen: the checklist, a screen tall, came first and hid both (outside
    # editor review).
    checklist = html.index('id="publish-checklist"')
    assert html.index('id="lesson-conflict"') < checklist
    assert html.index('class="errornote"') < checklist
    assert "+Ada&#x27;s better summary." in html  # the difference, line by line
    lesson = Lesson.objects.get(pk=demo.pk)
    assert lesson.summary == "Ada's better summary." and lesson.heading != "Bob's heading"
    # Bob chooses to overwrite, having seen the difference
    assert bob.post(url, bob_form | {"_overwrite": "yes"}).status_code == 302
    lesson.refresh_from_db()
    assert lesson.heading == "Bob's heading" and lesson.summary != "Ada's better summary."


def test_the_area_pop_up_keeps_the_subject_and_fills_its_slug(editor_client):
    area = make_area()
    page = editor_client.get(
        "/admin/lessons/area/add/", {"_to_field": "id", "_popup": "1", "subject": area.subject_id}
    ).content.decode()
    assert re.search(rf'<option value="{area.subject_id}" selected>', page)
    # the slug follows the name as it is typed (the admin's prepopulate script)
    assert "&quot;id&quot;: &quot;#id_slug&quot;" in page
    response = editor_client.post(
        "/admin/lessons/area/add/?_to_field=id&_popup=1",
        {
            "subject": str(area.subject_id),
            "name": "Systems and Performance",
            "position": "0",
            "_popup": "1",
            "_to_field": "id",
        },
    )
    assert response.status_code == 200  # the pop-up's closing page
    assert Area.objects.get(name="Systems and Performance").slug == "systems-and-performance"


def test_a_published_lesson_file_needs_the_new_rules_too(demo, tmp_path):
    from lessons.files import lesson_to_markdown

    text = lesson_to_markdown(demo)
    first_why = text.index("::: why ")
    end = text.index("\n::: ", first_why + 1)
    text = text[:first_why] + text[end + 1 :]  # drop question 1's first "why wrong"
    text = text.replace('"age_to": ', '"age_to": ').replace("age_to: 18", "age_to: null")
    cards = [m.start() for m in re.finditer(r"^::: flashcard ", text, re.MULTILINE)]
    text = text[: cards[3]]  # keep three flashcards
    (tmp_path / f"{demo.public_id}.md").write_text(text)
    out = io.StringIO()
    with pytest.raises(Exception, match="cannot be published") as refused:
        call_command("import_lessons", str(tmp_path), stdout=out)
    message = str(refused.value)
    assert re.search(
        r":\d+: question 1: cannot be published: Question 1 has no “why wrong”", message
    )
    assert (
        "flashcards: cannot be published: A published lesson needs at least 4 flashcards" in message
    )
    assert demo.flashcards.count() == 8
