"""Lessons as Markdown files, lossless both ways.

A file opens with front matter, one `name: <JSON value>` per line (which is also valid YAML),
then blocks that each start with a `::: name` line: the lesson's texts, each question with its
choices, and each flashcard. A question whose choices are shown in the written order, not
shuffled, carries `keep-choice-order` after its key. A text line that itself starts with `::: `
is written as `\\::: `.

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

import json
import re
from typing import Any

from lessons.models import Lesson

FRONT_MATTER = [
    "public_id", "slug", "title", "status", "subject", "subject_name", "subject_description",
    "area", "area_name", "age_from", "age_to", "credits", "video", "needs_first", "connections",
]  # fmt: skip
TEXT_BLOCKS = ["summary", "objectives", "heading", "body", "example", "tip", "recap", "transcript"]
MARKER = "::: "
KEY_PATTERN = re.compile(r"^[0-9a-f]{1,16}$")
KEEP_CHOICE_ORDER = "keep-choice-order"


class LessonFileError(ValueError):
    """A lesson file that cannot be read; the message says where and why."""


def _block(header: str, text: str) -> str:
    lines = [("\\" + line) if line.startswith(MARKER) else line for line in text.split("\n")]
    return f"\n{MARKER}{header}\n" + "\n".join(lines).strip("\n") + "\n"


def lesson_to_markdown(lesson: Lesson) -> str:
    """One lesson as a Markdown file, the same bytes for the same content."""
    values: dict[str, Any] = {
        "public_id": lesson.public_id,
        "slug": lesson.slug,
        "title": lesson.title,
        "status": lesson.status,
        "subject": lesson.subject.slug,
        "subject_name": lesson.subject.name,
        "subject_description": lesson.subject.description,
        "area": lesson.area.slug,
        "area_name": lesson.area.name,
        "age_from": lesson.age_from,
        "age_to": lesson.age_to,
        "credits": lesson.credits,
        "video": lesson.video.name or "",
        "needs_first": sorted(other.public_id for other in lesson.needs_first.all()),
        "connections": sorted(other.public_id for other in lesson.connections.all()),
    }
    parts = ["---\n"]
    parts += [f"{name}: {json.dumps(values[name], ensure_ascii=False)}\n" for name in FRONT_MATTER]
    parts.append("---\n")
    for name in TEXT_BLOCKS:
        parts.append(_block(name, getattr(lesson, name)))
    for question in lesson.questions.all():
        header = f"question {question.position} {question.key}"
        if question.keep_choice_order:
            header += f" {KEEP_CHOICE_ORDER}"
        parts.append(_block(header, question.prompt))
        for choice in question.labelled_choices:
            verdict = "right" if choice["correct"] else "wrong"
            parts.append(_block(f"choice {choice['letter']} {verdict}", choice["text"]))
            if choice.get("explanation"):
                parts.append(_block(f"why {choice['letter']}", choice["explanation"]))
        parts.append(_block("explanation", question.explanation))
    for card in lesson.flashcards.all():
        parts.append(_block(f"flashcard {card.position} {card.key}", card.front))
        parts.append(_block("back", card.back))
    return "".join(parts)


def markdown_to_lesson(text: str, *, source: str = "the file") -> dict[str, Any]:
    """A lesson file read back into the document `lessons_load` takes."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        raise LessonFileError(f"{source}: it must open with front matter between --- lines.")
    end = lines.index("---", 1)
    lesson: dict[str, Any] = {}
    for number, line in enumerate(lines[1:end], start=2):
        name, sep, raw = line.partition(": ")
        if not sep or name not in FRONT_MATTER:
            raise LessonFileError(f"{source}, line {number}: expected `name: value`, not {line!r}.")
        try:
            lesson[name] = json.loads(raw)
        except json.JSONDecodeError:
            raise LessonFileError(f"{source}, line {number}: {name}'s value is not JSON.") from None
    if missing := [name for name in FRONT_MATTER if name not in lesson]:
        raise LessonFileError(f"{source}: the front matter lacks {', '.join(missing)}.")

    blocks: list[tuple[str, int, list[str]]] = []
    for number, line in enumerate(lines[end + 1 :], start=end + 2):
        if line.startswith(MARKER):
            blocks.append((line[len(MARKER) :].strip(), number, []))
        elif blocks:
            blocks[-1][2].append(line[1:] if line.startswith("\\" + MARKER) else line)
        elif line.strip():
            raise LessonFileError(f"{source}, line {number}: text before the first ::: block.")

    lesson |= {"questions": [], "flashcards": []}
    for header, number, body in blocks:
        content = "\n".join(body).strip("\n")
        words = header.split()
        kind = words[0] if words else ""
        where = f"{source}, line {number}"
        if kind in TEXT_BLOCKS and len(words) == 1:
            lesson[kind] = content
        elif kind == "question" and len(words) in (3, 4):
            if words[3:] not in ([], [KEEP_CHOICE_ORDER]):
                raise LessonFileError(
                    f"{where}: after a question's key only `{KEEP_CHOICE_ORDER}` may follow, "
                    f"not {words[3]!r}."
                )
            lesson["questions"].append(
                {
                    "position": _number(words[1], where),
                    "key": _key(words[2], where),
                    "keep_choice_order": len(words) == 4,
                    "prompt": content,
                    "choices": [],
                    "explanation": "",
                }
            )
        elif kind == "choice" and len(words) == 3 and words[2] in {"right", "wrong"}:
            _current(lesson["questions"], where)["choices"].append(
                {"text": content, "correct": words[2] == "right", "explanation": ""}
            )
        elif kind == "why" and len(words) == 2:
            choices = _current(lesson["questions"], where)["choices"]
            if not choices:
                raise LessonFileError(f"{where}: a `why` block must follow its choice.")
            choices[-1]["explanation"] = content
        elif kind == "explanation" and len(words) == 1:
            _current(lesson["questions"], where)["explanation"] = content
        elif kind == "flashcard" and len(words) == 3:
            lesson["flashcards"].append(
                {
                    "position": _number(words[1], where),
                    "key": _key(words[2], where),
                    "front": content,
                    "back": "",
                }
            )
        elif kind == "back" and len(words) == 1:
            _current(lesson["flashcards"], where)["back"] = content
        else:
            raise LessonFileError(f"{where}: unknown block `::: {header}`.")
    lesson["objectives"] = [line for line in lesson.get("objectives", "").split("\n")]
    for kind in ("questions", "flashcards"):
        keys = [item["key"] for item in lesson[kind]]
        if len(set(keys)) != len(keys):
            raise LessonFileError(f"{source}: two {kind} share one key.")
    return lesson


def _number(text: str, where: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 4:
        raise LessonFileError(f"{where}: {text!r} is not a position.")
    return int(text)


def _key(text: str, where: str) -> str:
    if not KEY_PATTERN.match(text):
        raise LessonFileError(f"{where}: an item's key is 1 to 16 hex digits, not {text!r}.")
    return text


def _current(items: list[dict], where: str) -> dict:
    if not items:
        raise LessonFileError(f"{where}: this block must follow a question or flashcard.")
    return items[-1]
