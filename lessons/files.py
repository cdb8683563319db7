"""Lessons as Markdown files, lossless both ways.

A file opens with front matter, one `name: <JSON value>` per line (which is also valid YAML),
then blocks that each start with a `::: name` line: the lesson's texts, each question with its
choices, and each flashcard. A question whose choices are shown in the written order, not
shuffled, carries `keep-choice-order` after its key. A text line that itself starts with `::: `
is written as `\\::: `.

The format, with a commented example, is documented in docs/lesson-files.md.

    ---
    public_id: "mt__e-JwIxHek"
    title: "Training Across Many Devices"
    ---

    ::: summary
    When one device is too small…

    ::: question 1 5f1c9a02
    Which strategy…?

    ::: question 2 9c41d7e0 keep-choice-order
    How many bytes…?

    ::: choice A wrong
    Tensor parallelism

    ::: why A
    Tensor parallelism divides…
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
import re
import stat
from pathlib import Path
from typing import Any, NamedTuple

from django.core.files.storage import default_storage
from django.utils.text import Truncator

from lessons.models import PUBLIC_ID_PATTERN, Flashcard, Lesson
from lightmysky.lib.invisible import invisible_characters, visible
from lightmysky.lib.markdown import markdown_losses_at

FRONT_MATTER = [
    "public_id", "slug", "title", "status", "subject", "subject_name", "subject_description",
    "area", "area_name", "age_from", "age_to", "credits", "video", "needs_first", "connections",
    "revision",
]  # fmt: skip
# What a new lesson cannot do without; every other key has a default (see docs/lesson-files.md).
REQUIRED_FRONT_MATTER = ["title", "subject", "area", "age_from", "age_to"]
INTEGER_KEYS = {"age_from", "age_to"}
LIST_KEYS = {"needs_first", "connections"}
# Not part of a lesson's revision: the subject's and area's own texts, shared by many lessons.
SHARED_KEYS = {"subject_name", "subject_description", "area_name", "revision"}
TEXT_BLOCKS = ["summary", "objectives", "heading", "body", "example", "tip", "recap", "transcript"]
MARKER = "::: "
KEY_PATTERN = re.compile(r"^[0-9a-f]{1,16}$")
KEEP_CHOICE_ORDER = "keep-choice-order"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_CHOICES = 6
KEY_HELP = "an item's key is 1 to 16 hex digits (or leave it out and the import assigns one)"
CHOICE_ID_HELP = (
    "a choice's id is 1 to 16 hex digits (leave it out for a new choice: the import assigns one)"
)
# The blocks the pages render as Markdown (the others are plain text): what they will not show
# as written is a warning, as the admin shows it beside the same fields.
MARKDOWN_BLOCKS = {"body", "example", "tip", "recap", "transcript", "explanation"}
INLINE_MARKDOWN_BLOCKS = {"question", "choice", "why", "flashcard", "back"}
# A whole lesson's file is about 10 kB and the longest demo lesson 13 kB. Far beyond that is a
# mistake (a pasted book, a wrong file), and each save would keep it again as a revision.
MAX_FILE_BYTES = 256 * 1024


class Problem(NamedTuple):
    """One thing wrong with a lesson file, where it is and which field it concerns."""

    source: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.field}: {self.message}"

    def as_warning(self) -> str:
        """The problem as a warning, which does not stop an import."""
        return f"{self.source}:{self.line}: warning: {self.field}: {self.message}"


class LessonFileError(ValueError):
    """Lesson files that cannot be imported; each problem says where and why."""

    def __init__(self, problems: list[Problem] | str) -> None:
        if isinstance(problems, str):
            problems = [Problem("the file", 1, "file", problems)]
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _block(header: str, text: str) -> str:
    text = _normalise(text)
    lines = [("\\" + line) if line.startswith(MARKER) else line for line in text.split("\n")]
    return f"\n{MARKER}{header}\n" + "\n".join(lines).strip("\n") + "\n"


def lesson_to_markdown(lesson: Lesson) -> str:
    """One lesson as a Markdown file, the same bytes for the same content. Its `revision`
    names the lesson's content as exported, so an import can tell whether the lesson was
    changed in the admin since."""
    values, blocks = _front_matter_and_blocks(lesson)
    parts = ["---\n"]
    parts += [f"{name}: {json.dumps(values[name], ensure_ascii=False)}\n" for name in FRONT_MATTER]
    parts.append("---\n")
    return "".join(parts + blocks)


def _front_matter_and_blocks(lesson: Lesson) -> tuple[dict[str, Any], list[str]]:
    values: dict[str, Any] = {
        "public_id": lesson.public_id,
        "slug": lesson.slug,
        "title": lesson.title,
        "status": lesson.status,
        "subject": lesson.subject.slug,
        "subject_name": lesson.subject.name,
        "subject_description": _normalise(lesson.subject.description),
        "area": lesson.area.slug,
        "area_name": lesson.area.name,
        "age_from": lesson.age_from,
        "age_to": lesson.age_to,
        "credits": lesson.credits,
        "video": lesson.video.name or "",
        "needs_first": sorted(other.public_id for other in lesson.needs_first.all()),
        "connections": sorted(other.public_id for other in lesson.connections.all()),
    }
    blocks = [_block(name, getattr(lesson, name)) for name in TEXT_BLOCKS]
    for question in lesson.questions.all():
        header = f"question {question.position} {question.key}"
        if question.keep_choice_order:
            header += f" {KEEP_CHOICE_ORDER}"
        blocks.append(_block(header, question.prompt))
        for choice in question.labelled_choices:
            verdict = "right" if choice["correct"] else "wrong"
            header = f"choice {choice['letter']} {verdict} {choice.get('id', '')}".rstrip()
            blocks.append(_block(header, choice["text"]))
            if choice.get("explanation") and not choice["correct"]:  # a right choice has no why
                blocks.append(_block(f"why {choice['letter']}", choice["explanation"]))
        blocks.append(_block("explanation", question.explanation))
    for card in lesson.flashcards.all():
        blocks.append(_block(f"flashcard {card.position} {card.key}", card.front))
        blocks.append(_block("back", card.back))
    values["revision"] = content_revision(values, "".join(blocks))
    return values, blocks


def content_revision(front_matter: dict[str, Any], blocks: str) -> str:
    """A short fingerprint of a lesson's own content (not its subject's or area's texts)."""
    own = {name: value for name, value in front_matter.items() if name not in SHARED_KEYS}
    text = json.dumps(own, sort_keys=True, ensure_ascii=False) + _normalise(blocks)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def lesson_revision(lesson: Lesson) -> str:
    """The revision an export of the lesson would carry now."""
    return _front_matter_and_blocks(lesson)[0]["revision"]


def read_lesson_file(path: Path) -> str:
    """The text of a lesson file on disk (see lesson_file_text); its size is checked before
    it is read."""
    status = path.stat()
    if not stat.S_ISREG(status.st_mode):  # a device (such as /dev/zero) reads for ever
        raise LessonFileError([Problem(path.name, 1, "file", "is not a regular file")])
    refuse_large_file(status.st_size, source=path.name)
    return lesson_file_text(path.read_bytes(), source=path.name)


def lesson_file_text(data: bytes, *, source: str) -> str:
    """A lesson file's bytes as text. Refused (LessonFileError) over MAX_FILE_BYTES, or when it
    is not UTF-8, naming the line of the first byte that is not."""
    refuse_large_file(len(data), source=source)
    if b"\x00" in data[:8192]:  # an image, a PDF, a zip: no text file has a NUL byte
        raise LessonFileError(
            [
                Problem(
                    source,
                    1,
                    "file",
                    "is not a text file (an image or a document?): a lesson file is Markdown "
                    "text, like the .md file the admin's download gives.",
                )
            ]
        )
    data = data.removeprefix(codecs.BOM_UTF8)  # Windows' Notepad starts UTF-8 files with one
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        before = visible(data[line_start : error.start].decode("utf-8", errors="replace"))
        where = f"after “{before[-20:].lstrip()}”" if before.strip() else "at the start of the line"
        raise LessonFileError(
            [
                Problem(
                    source,
                    data.count(b"\n", 0, error.start) + 1,
                    "file",
                    f"is not UTF-8 text: the byte 0x{data[error.start]:02X} {where} is not "
                    "UTF-8. Save the file as UTF-8 (it may have been saved as Latin-1 or "
                    "Windows-1252).",
                )
            ]
        ) from error


def refuse_large_file(size: int, *, source: str) -> None:
    """Refuse (LessonFileError) a lesson file of more than MAX_FILE_BYTES, before reading it."""
    if size > MAX_FILE_BYTES:
        raise LessonFileError(
            [
                Problem(
                    source,
                    1,
                    "file",
                    f"is {math.ceil(size / 1024):,} KB; a lesson file may be at most "
                    f"{MAX_FILE_BYTES // 1024} KB (a whole lesson is usually about 10 KB). "
                    "Shorten its texts, or split it into two lessons.",
                )
            ]
        )


def markdown_to_lesson(text: str, *, source: str = "the file") -> dict[str, Any]:
    """A lesson file read back into the document `lessons_load` takes, with the line of each
    part (`lines`, and `line` on each question, choice and flashcard), and `warnings`: the
    Markdown that will not show as written, which does not stop an import. Raises
    LessonFileError naming every problem found, not just the first; an invisible character
    (lightmysky.lib.invisible) anywhere is one. A byte order mark opening the file is dropped."""
    problems: list[Problem] = []
    line_fields: dict[int, str] = {}  # what each line is part of, for invisible characters

    def problem(line: int, field: str, message: str) -> None:
        problems.append(Problem(source, line, field, message))

    lines = _normalise(text).removeprefix("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---" or "---" not in [x.strip() for x in lines[1:]]:
        raise LessonFileError(
            [
                Problem(
                    source,
                    1,
                    "front matter",
                    "the file must open with front matter between --- lines",
                )
            ]
        )
    end = [x.strip() for x in lines].index("---", 1)
    lesson: dict[str, Any] = {"source": source, "lines": {"front matter": 1, "end": end + 1}}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip():
            continue
        name, sep, raw = line.partition(":")
        name, raw = name.strip(), raw.strip()
        line_fields[number] = visible(name) or "front matter"
        if not sep or name not in FRONT_MATTER:
            problem(
                number,
                name or "front matter",
                f"expected one of the keys `name: value` ({', '.join(FRONT_MATTER)}), not {line!r}",
            )
            continue
        if name in lesson["lines"]:
            problem(number, name, f"appears twice (first on line {lesson['lines'][name]})")
            continue
        lesson["lines"][name] = number
        try:
            value = json.loads(raw)
        # ValueError: an integer of over 4,300 digits; RecursionError: brackets nested deep.
        except (ValueError, RecursionError):
            raw = Truncator(raw).chars(60)  # quoted back, whatever its length
            if name in INTEGER_KEYS:
                problem(number, name, f"expected a whole number, not {raw!r}")
            elif name in LIST_KEYS:
                problem(
                    number, name, 'expected a list of lesson ids in JSON, like ["mt_twcpO-945r"]'
                )
            else:
                problem(
                    number,
                    name,
                    f"put the text in double quotes, like {json.dumps(raw, ensure_ascii=False)}",
                )
            continue
        if name in INTEGER_KEYS:
            # null: a draft's ages not set yet (publishing needs them)
            ok = value is None or (isinstance(value, int) and not isinstance(value, bool))
            expected = "a whole number"
        elif name in LIST_KEYS:
            ok = isinstance(value, list) and all(
                isinstance(x, str) and re.fullmatch(PUBLIC_ID_PATTERN, x) for x in value
            )
            expected = 'a list of lesson ids, like ["mt_twcpO-945r"]'
            raw = Truncator(raw).chars(60)
        else:
            ok = isinstance(value, str)
            expected = "text in double quotes"
        if not ok:
            problem(number, name, f"expected {expected}, not {raw}")
            continue
        if name == "video" and value and not VIDEO_NAME.fullmatch(value):
            problem(
                number,
                name,
                f'expected the name of a video uploaded in the admin, like "videos/stars.mp4", '
                f"not {json.dumps(value, ensure_ascii=False)}",
            )
            continue
        lesson[name] = value
        if isinstance(value, str) and "\\" in raw and not invisible_characters(line):
            # Written as a JSON escape (\u200b): not in the line as typed, but in the text.
            for found in invisible_characters(value):
                problem(number, name, found.describe())
    for name in REQUIRED_FRONT_MATTER:
        if name not in lesson["lines"]:
            problem(1, name, f"the front matter needs `{name}:` (every other key may be left out)")

    blocks: list[tuple[str, int, list[str]]] = []
    block_field = "text"
    for number, line in enumerate(lines[end + 1 :], start=end + 2):
        if line.startswith(MARKER):
            blocks.append((line[len(MARKER) :].strip(), number, []))
            block_field = " ".join(visible(blocks[-1][0]).split()[:2]) or "block"
        elif blocks:
            blocks[-1][2].append(line[1:] if line.startswith("\\" + MARKER) else line)
        elif line.strip():
            problem(number, "text", "text before the first ::: block")
        line_fields[number] = block_field
    for found in invisible_characters("\n".join(lines)):
        problem(found.line, line_fields.get(found.line, "front matter"), found.describe())

    lesson |= {"questions": [], "flashcards": []}
    previous = ""  # the kind of the block before, with its letter for choices
    for header, number, body in blocks:
        content = "\n".join(body).strip("\n")
        words = header.split()
        kind = words[0] if words else ""
        block = f"::: {header}"
        if kind in TEXT_BLOCKS and len(words) == 1:
            if kind in lesson["lines"]:
                problem(number, kind, f"appears twice (first on line {lesson['lines'][kind]})")
            lesson["lines"][kind] = number
            lesson[kind] = content
        elif kind == "question" and 2 <= len(words) <= 4:
            rest = words[2:]
            keep = bool(rest) and rest[-1] == KEEP_CHOICE_ORDER
            if keep:
                rest = rest[:-1]
            if len(rest) > 1 or (rest and rest[0] == KEEP_CHOICE_ORDER):
                problem(
                    number,
                    f"question {words[1]}",
                    f"after a question's key only `{KEEP_CHOICE_ORDER}` may follow, "
                    f"not {rest[-1]!r}",
                )
                rest = rest[:1]
            if rest and not KEY_PATTERN.match(rest[0]):
                problem(
                    number,
                    f"question {words[1]}",
                    f"{KEY_HELP}, not {rest[0]!r}",
                )
            lesson["questions"].append(
                {
                    "position": _number(words[1], number, "question", problem),
                    "key": rest[0] if rest else "",
                    "keep_choice_order": keep,
                    "prompt": content,
                    "choices": [],
                    "explanation": "",
                    "line": number,
                }
            )
        elif kind == "choice" and len(words) in (3, 4) and words[2] in {"right", "wrong"}:
            question = _current(lesson["questions"], number, block, problem)
            choice_id = words[3] if len(words) == 4 else ""
            if choice_id and not KEY_PATTERN.match(choice_id):
                problem(number, f"choice {words[1]}", f"{CHOICE_ID_HELP}, not {choice_id!r}")
            if question is not None and choice_id:
                taken = {c.get("id"): c["line"] for c in question["choices"]}
                if choice_id in taken:
                    problem(
                        number,
                        f"choice {words[1]}",
                        f"id {choice_id} is already used on line {taken[choice_id]}: each "
                        "choice of a question has its own",
                    )
            if question is not None:
                expected = (
                    LETTERS[len(question["choices"])]
                    if len(question["choices"]) < len(LETTERS)
                    else "?"
                )
                if words[1] != expected:
                    problem(
                        number,
                        f"choice {words[1]}",
                        "choice letters run A, B, C… in order: this is choice "
                        f"{expected} of question {question['position']}",
                    )
                if not content.strip():
                    problem(number, f"choice {words[1]}", "this choice has no text")
                if len(question["choices"]) == MAX_CHOICES:
                    problem(
                        number,
                        f"choice {words[1]}",
                        f"a question has at most {MAX_CHOICES} choices",
                    )
                question["choices"].append(
                    {
                        "text": content,
                        "correct": words[2] == "right",
                        "explanation": "",
                        "line": number,
                    }
                    | ({"id": choice_id} if choice_id else {})
                )
                previous = f"choice {words[1]}"
                continue
        elif kind == "why" and len(words) == 2:
            question = _current(lesson["questions"], number, block, problem)
            if question is not None:
                if previous != f"choice {words[1]}":
                    follows = (
                        f"it follows {previous}"
                        if previous.startswith("choice")
                        else "no choice comes just before it"
                    )
                    problem(
                        number,
                        f"why {words[1]}",
                        f"a `why {words[1]}` block must follow choice {words[1]} "
                        f"directly ({follows})",
                    )
                else:
                    question["choices"][-1]["explanation"] = content
        elif kind == "explanation" and len(words) == 1:
            question = _current(lesson["questions"], number, block, problem)
            if question is not None:
                question["explanation"] = content
                question["explanation_line"] = number
        elif kind == "flashcard" and len(words) in (2, 3):
            if len(words) == 3 and not KEY_PATTERN.match(words[2]):
                problem(
                    number,
                    f"flashcard {words[1]}",
                    f"{KEY_HELP}, not {words[2]!r}",
                )
            lesson["flashcards"].append(
                {
                    "position": _number(words[1], number, "flashcard", problem),
                    "key": words[2] if len(words) == 3 else "",
                    "front": content,
                    "back": "",
                    "line": number,
                }
            )
        elif kind == "back" and len(words) == 1:
            card = _current(lesson["flashcards"], number, block, problem)
            if card is not None:
                card["back"] = content
        else:
            problem(number, "block", f"unknown block `{block}`")
        previous = kind
    if "objectives" in lesson:
        lesson["objectives"] = lesson["objectives"].split("\n")
    for kind in ("questions", "flashcards"):
        singular = kind[:-1]
        seen_keys: dict[str, int] = {}
        seen_positions: dict[int, int] = {}
        for item in lesson[kind]:
            where = f"{singular} {item['position']}"
            if item["key"] in seen_keys:
                problem(
                    item["line"],
                    where,
                    f"key {item['key']} is already used on line {seen_keys[item['key']]}",
                )
            if item["position"] in seen_positions:
                problem(
                    item["line"],
                    where,
                    f"position {item['position']} is already used on line "
                    f"{seen_positions[item['position']]}",
                )
            if item["key"]:
                seen_keys.setdefault(item["key"], item["line"])
            seen_positions.setdefault(item["position"], item["line"])
    if lesson.get("status") == "published":
        for question in lesson["questions"]:
            if question["choices"] and not any(c["correct"] for c in question["choices"]):
                problem(
                    question["line"],
                    f"question {question['position']}",
                    "no choice is marked right (`::: choice X right`); a published lesson "
                    "needs a right answer for each question",
                )
    if problems:
        raise LessonFileError(sorted(problems, key=lambda p: p.line))
    lesson["warnings"] = _video_warnings(lesson, source) + _markdown_warnings(blocks, source)
    lesson["revision_of_file"] = content_revision(
        {name: lesson[name] for name in FRONT_MATTER if name in lesson},
        "".join(_block(h, "\n".join(b)) for h, _, b in blocks),
    )
    return lesson


# A video named in a file is one uploaded in the admin: its stored name, videos/NAME (any case,
# as the admin stores the uploaded name). Never a path out of that folder.
VIDEO_NAME = re.compile(r"videos/[^/\\.][^/\\]*\.(mp4|webm|ogv)", re.IGNORECASE)


def _video_warnings(lesson: dict[str, Any], source: str) -> list[Problem]:
    """A video the site does not have yet is shown broken until it is uploaded: said, not
    refused, as lessons move between sites before their videos do."""
    name = lesson.get("video")
    if not name:
        return []
    try:
        missing = not default_storage.exists(name)
    except Exception as error:  # a storage that cannot answer (S3 down) is no reason to refuse
        return [
            Problem(
                source,
                lesson["lines"]["video"],
                "video",
                f"could not be looked up ({type(error).__name__})",
            )
        ]
    if not missing:
        return []
    message = (
        f"no uploaded video is called {json.dumps(name, ensure_ascii=False)} on this site: the "
        "lesson shows a broken video until it is uploaded on the lesson's admin page"
    )
    return [Problem(source, lesson["lines"]["video"], "video", message)]


def _markdown_warnings(blocks: list[tuple[str, int, list[str]]], source: str) -> list[Problem]:
    """What the Markdown blocks will not show as written, each at its line of the file."""
    warnings: list[Problem] = []
    for header, number, body in blocks:
        words = header.split()
        kind = words[0] if words else ""
        if kind in MARKDOWN_BLOCKS or kind in INLINE_MARKDOWN_BLOCKS:
            losses = markdown_losses_at("\n".join(body), inline=kind in INLINE_MARKDOWN_BLOCKS)
            field = " ".join(words[:2])
            warnings += [Problem(source, number + line, field, loss) for line, loss in losses]
    return warnings


def _number(text: str, line: int, kind: str, problem) -> int:
    high = Flashcard.MAX_POSITION
    # (the length first: int() refuses a string of over 4,300 digits)
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(high))) or not (
        0 < int(text) <= high
    ):
        shown = Truncator(text).chars(12)
        problem(line, kind, f"{shown!r} is not a position (a whole number from 1 to {high})")
        return 0
    return int(text)


def _current(items: list[dict], line: int, block: str, problem) -> dict | None:
    if not items:
        problem(line, "block", f"`{block}` must follow a question or flashcard")
        return None
    return items[-1]
