"""Stricter lesson files: invisible characters are errors with their line,
Markdown that will not show as written is a warning with its line, and a lesson file over
256 KB is refused, through import_lessons (with and without --check), the admin's upload and,
for invisible characters, the admin's own forms."""

from __future__ import annotations

import html
import io
import math
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lessons.files import MAX_FILE_BYTES, lesson_to_markdown
from lessons.models import Lesson, Question
from lightmysky.lib.invisible import invisible_characters
from lightmysky.lib.markdown import markdown_losses, markdown_losses_at
from tests.factories import make_area
from tests.lessons.test_admin import change_page_data, new_lesson_form, upload

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
ZWSP, RLO, PDF = "\u200b", "\u202e", "\u202c"
ZWJ, ZWNJ, RLM = "\u200d", "\u200c", "\u200f"
# Text on purpose: Hebrew, Arabic with a direction mark, a Persian word with its non-joiner,
# emoji built with joiners (technologist, rainbow flag) and a tag sequence (England's flag).
HEBREW = "דלי אסימונים"
ARABIC = f"دلو الرموز{RLM}."
PERSIAN = f"می{ZWNJ}خواهم"
EMOJI = f"👩{ZWJ}💻 🏳️{ZWJ}🌈 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f 🪣"


def import_lessons(directory: Path, *options: str) -> str:
    out = io.StringIO()
    call_command("import_lessons", str(directory), *options, stdout=out)
    return out.getvalue()


def refused(directory: Path, *options: str) -> str:
    with pytest.raises(CommandError) as error:
        import_lessons(directory, *options)
    return str(error.value)


def lesson_file(demo: Lesson, directory: Path) -> Path:
    """The seed lesson alone as its file in a folder of its own."""
    path = directory / f"{demo.public_id}.md"
    path.write_text(lesson_to_markdown(demo))
    return path


def line_of(text: str, start: str) -> int:
    """The number of the first line of the text that starts with `start`."""
    lines = text.split("\n")
    return next(n for n, line in enumerate(lines, start=1) if line.startswith(start))


def first_choice(text: str, question: int, letter: str) -> tuple[int, str]:
    """The line of a choice's text in a lesson file, and that text."""
    lines = text.split("\n")
    header = line_of(text, f"::: question {question} ")
    at = next(n for n in range(header, len(lines)) if lines[n].startswith(f"::: choice {letter}"))
    return at + 2, lines[at + 1]


def with_block_text(text: str, block: str, added: str) -> str:
    """The file with `added` as the first lines of a block's text."""
    return text.replace(f"::: {block}\n", f"::: {block}\n{added}\n", 1)


# The rule itself (lightmysky/lib/invisible.py), without a database.


@pytest.mark.parametrize(
    "text",
    [
        f"{HEBREW} · {ARABIC} {EMOJI}",
        PERSIAN,
        f"שלום{RLM}!",  # a direction mark on a line with right-to-left letters
        "क्\u200dष",  # a Devanagari conjunct held by a joiner after the virama
        f"ب{ZWJ}",  # an Arabic letter's initial form, shown with a joiner
        "\u0600١٢٣",  # the Arabic number sign is shown, spanning the digits
        "tab\tand\nnew line, no-break\u00a0space, ideographic\u3000space",
    ],
)
def test_text_on_purpose_holds_no_invisible_characters(text):
    assert invisible_characters(text) == []


@pytest.mark.parametrize(
    ("text", "code", "line", "context"),
    [
        (f"Token{ZWSP}Bucket", 0x200B, 1, "Token"),
        (f"{RLO}The largest burst{PDF}", 0x202E, 1, ""),
        ("first\nsecond \u2066isolated\u2069", 0x2066, 2, "second "),
        (f"pass{ZWNJ}word", 0x200C, 1, "pass"),  # between ASCII letters it joins nothing
        (f"{ZWJ} start", 0x200D, 1, ""),
        (f"plain{RLM}.", 0x200F, 1, "plain"),  # no right-to-left letter on its line
        (f"{HEBREW}\nplain{RLM}.", 0x200F, 2, "plain"),
        ("a\ufeffb", 0xFEFF, 1, "a"),
        ("soft\u00adhyphen", 0xAD, 1, "soft"),
        ("bell\x07", 0x07, 1, "bell"),
        ("word\u2060joiner", 0x2060, 1, "word"),
        ("line\u2028separator", 0x2028, 1, "line"),
        ("x\U000e0067", 0xE0067, 1, "x"),  # a tag outside an emoji flag
        (f"{RLO}{HEBREW}", 0x202E, 1, ""),  # right-to-left letters need no override
    ],
)
def test_invisible_characters_are_found_with_their_line(text, code, line, context):
    found = invisible_characters(text)
    assert [(ord(c.char), c.line, c.context) for c in found][:1] == [(code, line, context)]


def test_the_message_quotes_what_is_shown_never_the_invisible_characters():
    (override, pop) = invisible_characters(f"{RLO}abc{PDF} done")
    assert override.describe().startswith(
        "an invisible character, U+202E RIGHT-TO-LEFT OVERRIDE, at the start of the line: it "
        "changes the order in which the text around it is shown"
    )
    assert "after “abc”" in pop.describe() and RLO not in pop.describe()


def test_markdown_losses_say_on_which_line_they_are():
    source = (
        "A first line.\n"  # 1
        "![diagram](bucket.png) inline\n"  # 2
        "and **never closed\n"  # 3
        "\n"
        "<script>alert(1)</script>\n"  # 5
        "\n"
        "2 ** 10 is 1024, **bold** is fine, \\*\\* is escaped\n"  # 7
        "\n"
        "```python\n"  # 9
        "code that never ends"
    )
    assert [line for line, _ in markdown_losses_at(source)] == [2, 3, 5, 9]
    assert markdown_losses("```\ncode\n```\n\n~~~\nmore\n~~~") == []
    assert markdown_losses("**5 tokens", inline=True) == [
        "This ** is never closed, so it is shown as typed: close it (**bold**), or write \\*\\* "
        "for the stars themselves."
    ]


# Through import_lessons: errors refuse everything; warnings are said and do not stop it.


def test_a_zero_width_space_in_the_title_is_refused_with_its_line(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    text = path.read_text().replace(f'title: "{demo.title}"', f'title: "Token{ZWSP}Bucket"')
    path.write_text(text)
    expected = (
        f"{path.name}:{line_of(text, 'title:')}: title: an invisible character, U+200B ZERO "
        'WIDTH SPACE, after “title: "Token”: it shows nothing'
    )
    for options in [("--check",), ()]:
        message = refused(tmp_path, *options)
        assert expected in message and "1 problem found; nothing was written." in message
        assert Lesson.objects.get(pk=demo.pk).title == demo.title


def test_a_zero_width_space_written_as_a_json_escape_is_refused_too(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    text = path.read_text().replace(f'title: "{demo.title}"', 'title: "Token\\u200bBucket"')
    path.write_text(text)
    assert f"{path.name}:{line_of(text, 'title:')}: title: an invisible character, U+200B" in (
        refused(tmp_path)
    )


def test_half_a_character_written_as_a_json_escape_is_refused_not_a_server_error(demo, tmp_path):
    """A lone UTF-16 surrogate (\\ud800) is valid JSON but no text can hold it: fingerprinting
    the lesson failed with UnicodeEncodeError, a 500 on the upload page (outside editor review)."""
    path = lesson_file(demo, tmp_path)
    text = path.read_text().replace(f'title: "{demo.title}"', 'title: "Token\\ud800Bucket"')
    path.write_text(text)
    for options in [("--check",), ()]:
        message = refused(tmp_path, *options)
        assert f"{path.name}:{line_of(text, 'title:')}: title: an invisible character, U+D800" in (
            message
        )
        assert "half of a character" in message
    assert Lesson.objects.get(pk=demo.pk).title == demo.title


def test_a_right_to_left_override_in_a_choice_is_refused_with_its_line(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    text = path.read_text()
    line, choice = first_choice(text, 2, "B")
    text = text.replace(f"\n{choice}\n", f"\n{RLO}{choice}{PDF}\n", 1)
    path.write_text(text)
    for options in [("--check",), ()]:
        message = refused(tmp_path, *options)
        assert (
            f"{path.name}:{line}: choice B: an invisible character, U+202E RIGHT-TO-LEFT "
            "OVERRIDE, at the start of the line"
        ) in message
        assert f"{path.name}:{line}: choice B: an invisible character, U+202C POP" in message
        assert "2 problems found; nothing was written." in message
    assert choice in [c["text"] for c in demo.questions.get(position=2).choices]


def test_a_byte_order_mark_opening_a_file_is_dropped_but_one_inside_is_refused(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    path.write_text("\ufeff" + path.read_text())
    assert "0 created, 0 updated, 1 unchanged" in import_lessons(tmp_path, "--check")
    text = path.read_text().replace("::: heading\n", "::: heading\n\ufeff", 1)
    path.write_text(text)
    assert f"{path.name}:{line_of(text, '::: heading') + 1}: heading: an invisible character, " in (
        refused(tmp_path, "--check")
    )


@pytest.mark.parametrize(
    ("block", "added", "warning"),
    [
        (
            "example",
            "```python",
            "This code block (```) is never closed, so everything after it is shown as code",
        ),
        ("body", "<script>alert(1)</script>", "HTML (<script>alert(1)</script>) is shown as typed"),
        ("example", "![diagram](bucket.png)", "An image (“diagram”) is dropped, with its text"),
        ("recap", "Take **5 tokens", "This ** is never closed, so it is shown as typed"),
        (
            "tip",
            "[click](javascript:alert(3))",
            "A link to javascript:alert(3) is not made: links go to http, https or mailto",
        ),
        ("body", "[files](ftp://example.org/a)", "A link to ftp://example.org/a is not made"),
    ],
)
def test_markdown_that_will_not_show_as_written_is_a_warning_with_its_line(
    demo, tmp_path, block, added, warning
):
    path = lesson_file(demo, tmp_path)
    text = with_block_text(path.read_text(), block, added)
    path.write_text(text)
    expected = f"{path.name}:{line_of(text, f'::: {block}') + 1}: warning: {block}: {warning}"
    out = import_lessons(tmp_path, "--check")
    assert expected in out and "1 warning: learners will not see that Markdown as written" in out
    assert "Check passed. Lessons: 0 created, 1 updated, 0 unchanged." in out
    assert getattr(Lesson.objects.get(pk=demo.pk), block) == getattr(demo, block)
    out = import_lessons(tmp_path)
    assert expected in out and "Lessons: 0 created, 1 updated, 0 unchanged." in out
    assert getattr(Lesson.objects.get(pk=demo.pk), block).startswith(added)


def test_warnings_are_listed_with_the_problems_of_a_refused_import(demo, tmp_path):
    """The warnings of the files that can be read; a file with errors has its own warnings
    listed once those are fixed."""
    path = lesson_file(demo, tmp_path)
    path.write_text(path.read_text().replace("::: tip", "::: tipp"))
    other = Lesson.objects.get(public_id="mt_twcpO-945r")
    (tmp_path / "other.md").write_text(
        with_block_text(lesson_to_markdown(other), "body", "<b>bold</b>")
    )
    message = refused(tmp_path)
    assert f"{path.name}:{line_of(path.read_text(), '::: tipp')}: block: unknown block" in message
    assert "other.md:" in message and ": warning: body: HTML (<b>) is shown as typed" in message
    assert "1 problem found; nothing was written." in message


def test_a_lesson_file_over_256_kb_is_refused(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    text = path.read_text()
    padding = "x" * (300 * 1024 - len(text.encode()))
    path.write_text(text.replace("::: body\n", f"::: body\n{padding}", 1))
    assert path.stat().st_size == 300 * 1024
    for options in [("--check",), ()]:
        message = refused(tmp_path, *options)
        assert (
            f"{path.name}:1: file: is 300 KB; a lesson file may be at most 256 KB (a whole "
            "lesson is usually about 10 KB). Shorten its texts, or split it into two lessons."
        ) in message
        assert "1 problem found; nothing was written." in message
    assert Lesson.objects.get(pk=demo.pk).body == demo.body

    # The limit is the file's size in bytes: 256 KB passes, one byte more does not.
    filler = "x" * (MAX_FILE_BYTES - len(text.encode()))
    path.write_text(text.replace("::: body\n", f"::: body\n{filler}", 1))
    assert path.stat().st_size == MAX_FILE_BYTES
    assert "Check passed." in import_lessons(tmp_path, "--check")
    path.write_text(text.replace("::: body\n", f"::: body\nx{filler}", 1))
    assert ":1: file: is 257 KB; a lesson file may be at most 256 KB" in refused(tmp_path)


def test_a_latin_1_file_is_refused_naming_its_line(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    # Written in Latin-1 where the editor typed: É is the byte 0xC9, which UTF-8 cannot start with.
    credits = "Écrit pour LightMySky, café"
    text = path.read_text().replace(demo.credits, credits)
    path.write_bytes(text.encode().replace(credits.encode(), credits.encode("latin-1")))
    expected = (
        f"{path.name}:{line_of(text, 'credits:')}: file: is not UTF-8 text: the byte 0xC9 after "
        '“credits: "” is not UTF-8. Save the file as UTF-8'
    )
    for options in [("--check",), ()]:
        assert expected in refused(tmp_path, *options)
    assert Lesson.objects.get(pk=demo.pk).credits == demo.credits


def test_hebrew_arabic_and_emoji_on_purpose_import_without_a_word(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    title = f"{HEBREW} · {ARABIC} {EMOJI} Token Bucket"
    _, choice = first_choice(path.read_text(), 2, "B")
    text = path.read_text().replace(f'title: "{demo.title}"', f'title: "{title}"')
    path.write_text(text.replace(f"\n{choice}\n", f"\n{choice} {PERSIAN} 🚀\n", 1))
    out = import_lessons(tmp_path)
    assert "warning" not in out and "0 created, 1 updated, 0 unchanged" in out
    assert Lesson.objects.get(pk=demo.pk).title == title
    choices = [c["text"] for c in demo.questions.get(position=2).choices]
    assert f"{choice} {PERSIAN} 🚀" in choices


def test_the_demo_lessons_pass_with_no_warnings(db):
    out = import_lessons(DEMO, "--check")
    assert "warning" not in out
    assert "Check passed. Lessons: 3 created, 0 updated, 0 unchanged." in out


def test_check_lessons_refuses_what_it_cannot_read_too(demo, tmp_path):
    path = lesson_file(demo, tmp_path)
    path.write_text(path.read_text().replace(demo.heading, f"A{ZWSP}heading"))
    with pytest.raises(CommandError) as error:
        call_command("check_lessons", str(tmp_path), stdout=io.StringIO())
    assert error.value.returncode == 2
    assert ": heading: an invisible character, U+200B ZERO WIDTH SPACE, after “A”" in str(
        error.value
    )


@pytest.mark.parametrize(
    "line, said",
    [
        ("age_from: " + "9" * 5000, "age_from: expected a whole number"),
        ("title: " + "[" * 100_000, "title: put the text in double quotes, like "),
    ],
)
def test_front_matter_json_too_large_or_too_deep_is_a_problem_not_a_crash(
    demo, tmp_path, editor_client, line, said
):
    """A 5,000-digit number or 100,000 open brackets got past the JSON check: a 500 in the
    upload and a traceback from import_lessons (outside fuzzing review of stop 71)."""
    path = lesson_file(demo, tmp_path)
    key = line.split(":")[0]
    text = "\n".join(
        line if row.startswith(f"{key}:") else row for row in path.read_text().split("\n")
    )
    path.write_text(text)
    number = line_of(text, f"{key}:")
    message = refused(tmp_path, "--check")
    assert f"{path.name}:{number}: {said}" in message
    assert len(message) < 1000  # what was written is quoted back shortened
    response = upload(editor_client, text, path.name)
    assert response.status_code == 400
    assert f"{path.name}:{number}: {said}" in response.content.decode()
    assert Lesson.objects.get(pk=demo.pk).title == demo.title


def test_a_lesson_file_that_is_not_a_regular_file_is_not_read(demo, tmp_path):
    """A link to /dev/zero, whose size reads as 0, was read for ever."""
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    assert "zero.md:1: file: is not a regular file" in refused(tmp_path, "--check")


# Through the admin: the upload, and the lesson's own forms.


def test_the_admin_upload_refuses_invisible_characters_and_large_or_latin_1_files(
    editor_client, demo
):
    text = lesson_to_markdown(demo)
    name = f"{demo.public_id}.md"
    spoilt = text.replace(f'title: "{demo.title}"', f'title: "Token{ZWSP}Bucket"')
    refused_upload = upload(editor_client, spoilt, name)
    html = refused_upload.content.decode()
    assert refused_upload.status_code == 400
    assert "1 problem in" in html and "nothing was changed" in html
    assert f"{name}:{line_of(text, 'title:')}: title: an invisible character, U+200B" in html
    applied = editor_client.post(
        "/admin/lessons/lesson/upload/", {"name": name, "text": spoilt, "apply": "yes"}
    )
    assert applied.status_code == 400 and "U+200B ZERO WIDTH SPACE" in applied.content.decode()

    large = text + "x" * MAX_FILE_BYTES
    kb = math.ceil(len(large.encode()) / 1024)
    html = upload(editor_client, large, name).content.decode()
    assert f"{name}:1: file: is {kb} KB; a lesson file may be at most 256 KB" in html
    # Carried over to be applied, it is over the request limit too (DATA_UPLOAD_MAX_MEMORY_SIZE)
    applied = editor_client.post(
        "/admin/lessons/lesson/upload/", {"name": name, "text": large, "apply": "yes"}
    )
    assert applied.status_code == 400

    latin = text.encode().replace(demo.credits.encode(), "Écrit pour LightMySky".encode("latin-1"))
    html = upload(editor_client, latin, name).content.decode()
    assert f"{name}:{line_of(text, 'credits:')}: file: is not UTF-8 text: the byte 0xC9" in html
    assert Lesson.objects.get(pk=demo.pk).title == demo.title


def test_the_admin_upload_shows_markdown_warnings_and_still_applies(editor_client, demo):
    name = f"{demo.public_id}.md"
    text = with_block_text(lesson_to_markdown(demo), "example", "![diagram](bucket.png)")
    html = upload(editor_client, text, name).content.decode()
    assert "1 warning: learners will not see this Markdown as written" in html
    assert (
        f'<li class="warning">{name}:{line_of(text, "::: example") + 1}: example: An image '
        "(“diagram”) is dropped"
    ) in html
    assert "Apply these changes" in html
    applied = editor_client.post(
        "/admin/lessons/lesson/upload/", {"name": name, "text": text, "apply": "yes"}
    )
    assert applied.status_code == 302
    assert Lesson.objects.get(pk=demo.pk).example.startswith("![diagram](bucket.png)")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", f"Reading{ZWSP} the Night Sky", "An invisible character, U+200B ZERO WIDTH"),
        (
            "body",
            f"The pole star\nbarely {RLO}moves.",
            "On line 2, an invisible character, U+202E RIGHT-TO-LEFT OVERRIDE, after “barely ”",
        ),
        ("questions-2-prompt", f"Which{ZWSP} star?", "An invisible character, U+200B"),
        ("questions-2-choice_1_text", f"{RLO}Sirius", "U+202E RIGHT-TO-LEFT OVERRIDE, at the"),
        ("questions-2-choice_1_why", f"Too{ZWNJ} bright", "U+200C ZERO WIDTH NON-JOINER"),
        ("flashcards-1-front", f"Front{ZWSP}", "An invisible character, U+200B"),
    ],
)
def test_the_admin_forms_refuse_invisible_characters_in_their_text_boxes(
    editor_client, db, field, value, message
):
    data = new_lesson_form(make_area()) | {field: value}
    response = editor_client.post("/admin/lessons/lesson/add/", data)
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html.replace("&quot;", '"').replace("&#x27;", "'")
    assert not Lesson.objects.exists()


def test_the_admin_forms_take_hebrew_arabic_and_emoji_on_purpose(editor_client, db):
    title = f"{HEBREW} · {ARABIC} {EMOJI}"
    data = new_lesson_form(make_area()) | {
        "title": title,
        "questions-2-choice_1_text": f"Sirius {PERSIAN}",
    }
    response = editor_client.post("/admin/lessons/lesson/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    lesson = Lesson.objects.get(title=title)
    assert f"Sirius {PERSIAN}" in [c["text"] for c in lesson.questions.get(position=3).choices]


def test_a_questions_own_page_refuses_an_override_in_a_choice(editor_client, demo):
    question = demo.questions.get(position=1)
    page = editor_client.get(f"/admin/lessons/question/{question.pk}/change/")
    form = page.context["adminform"].form
    data = {f.html_name: f.value() for f in form if f.value() not in (None, False)}
    data["choice_0_text"] = f"{RLO}{data['choice_0_text']}"
    response = editor_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 200
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in response.content.decode()
    assert Question.objects.get(pk=question.pk).choices == question.choices


def test_saving_an_unchanged_lesson_page_still_works(editor_client, demo):
    data = change_page_data(editor_client, demo)
    response = editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]


def test_a_revision_kept_before_the_rule_cannot_be_restored_as_it_is(editor_client, demo):
    from lessons.models import LessonRevision

    revision = demo.revisions.get()
    text = revision.text.replace(f'title: "{demo.title}"', f'title: "Token{ZWSP}Bucket"')
    LessonRevision.objects.filter(pk=revision.pk).update(text=text)
    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{revision.pk}/restore/"
    page = editor_client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "This revision cannot be restored as it is: 1 problem" in html
    assert "title: an invisible character, U+200B ZERO WIDTH SPACE" in html
    assert "Restore this revision" not in html
    assert editor_client.post(url).status_code == 400
    assert Lesson.objects.get(pk=demo.pk).title == demo.title


@pytest.mark.parametrize("item", ["mt__e-Jw\\u0000xHek", "mt__e\\ud800JwIxHek", "not an id"])
def test_a_lesson_list_holds_lesson_ids_only(demo, tmp_path, editor_client, item):
    """A NUL (which PostgreSQL's text cannot hold) or half a character in `needs_first` was a
    500 in the upload and a traceback from import_lessons (second fuzzing review of stop 71)."""
    path = lesson_file(demo, tmp_path)
    line = f'needs_first: ["{item}"]'
    text = re.sub(r"^needs_first: .*$", lambda _: line, path.read_text(), flags=re.M)
    assert item in text
    path.write_text(text)
    said = 'needs_first: expected a list of lesson ids, like ["mt_twcpO-945r"]'
    assert said in refused(tmp_path, "--check")
    response = upload(editor_client, text, path.name)
    assert response.status_code == 400 and said in html.unescape(response.content.decode())


@pytest.mark.parametrize("number", ["12000", "0", "9" * 5000])
def test_a_flashcard_numbered_outside_1_to_9999_is_told_the_range(demo, tmp_path, number):
    path = lesson_file(demo, tmp_path)
    path.write_text(path.read_text().replace("::: flashcard 8 ", f"::: flashcard {number} ", 1))
    shown = number if len(number) <= 12 else "9" * 11 + "…"  # a long one quoted shortened
    assert f"'{shown}' is not a position (a whole number from 1 to 9999)" in refused(tmp_path)
