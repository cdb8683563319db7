"""Writes to content from outside the admin: lesson files (and the demo), and problem reports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction

from lessons.files import LessonFileError, lesson_to_markdown, markdown_to_lesson
from lessons.forms import publish_problems
from lessons.models import (
    Area,
    Flashcard,
    Lesson,
    ProblemReport,
    Question,
    Subject,
    carry_choice_ids,
)

LESSON_FIELDS = [
    "slug", "title", "summary", "age_from", "age_to", "heading", "body", "example", "tip",
    "recap", "transcript", "credits", "video", "status",
]  # fmt: skip


@dataclass
class LoadResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0


def _assign(instance: models.Model, values: dict[str, Any]) -> bool:
    """Set the values on the instance; True when any of them differed."""
    changed = False
    for name, value in values.items():
        if getattr(instance, name) != value:
            setattr(instance, name, value)
            changed = True
    return changed


def _save_if_changed(instance: models.Model, values: dict[str, Any]) -> bool:
    changed = _assign(instance, values) or instance.pk is None
    if changed:
        instance.full_clean(validate_unique=False, validate_constraints=False)
        instance.save()
    return changed


@transaction.atomic
def lessons_load(*, lessons: list[dict[str, Any]]) -> LoadResult:
    """Create or update lessons (with their subjects and areas) by public id.

    Loading the same lessons again writes nothing. A published lesson must pass the publish
    rule; anything wrong raises ValidationError and nothing is kept.
    """
    result = LoadResult()
    loaded: dict[str, tuple[Lesson, dict[str, Any]]] = {}
    for item in lessons:
        lesson = Lesson.objects.filter(public_id=item["public_id"]).first()
        is_new = lesson is None
        lesson = lesson or Lesson(public_id=item["public_id"])
        subject = _subject(item)
        area = _area(subject, item)
        values = {name: item.get(name, "") for name in LESSON_FIELDS}
        values |= {"subject_id": subject.pk, "area_id": area.pk}
        values["objectives"] = "\n".join(item["objectives"])
        if not values["status"]:
            values["status"] = Lesson.Status.DRAFT
        changed = _save_if_changed(lesson, values)
        changed |= _load_questions(lesson, item["questions"])
        changed |= _load_flashcards(lesson, item.get("flashcards", []))
        if lesson.status == Lesson.Status.PUBLISHED:
            questions = list(lesson.questions.all())
            if problems := publish_problems([(q.position, q) for q in questions]):
                raise ValidationError(
                    f"{lesson.public_id} cannot be published: {' '.join(problems)}"
                )
        loaded[lesson.public_id] = (lesson, item)
        if is_new:
            result.created += 1
        elif changed:
            result.updated += 1
        else:
            result.unchanged += 1

    # Connections go both ways: a link named on either side counts for both.
    connected = {pid: set(item.get("connections", [])) for pid, (_, item) in loaded.items()}
    for pid, others in list(connected.items()):
        for other in others:
            connected.setdefault(other, set()).add(pid)
    for pid, (lesson, item) in loaded.items():
        _set_links(lesson.needs_first, item.get("needs_first", []), loaded)
        _set_links(lesson.connections, sorted(connected[pid]), loaded)
    for lesson, _ in loaded.values():
        try:
            lesson.validate_needs_first(lesson.needs_first.all())
        except ValidationError as error:
            raise ValidationError(f"{lesson.public_id}: {' '.join(error.messages)}") from error
    return result


def _subject(item: dict[str, Any]) -> Subject:
    subject = Subject.objects.filter(slug=item["subject"]).first() or Subject(slug=item["subject"])
    values = {"name": item.get("subject_name") or subject.name or item["subject"]}
    if "subject_description" in item:
        values["description"] = item["subject_description"]
    _save_if_changed(subject, values)
    return subject


def _area(subject: Subject, item: dict[str, Any]) -> Area:
    area = Area.objects.filter(subject=subject, slug=item["area"]).first() or Area(
        subject=subject, slug=item["area"]
    )
    _save_if_changed(area, {"name": item.get("area_name") or area.name or item["area"]})
    return area


def _load_questions(lesson: Lesson, items: list[dict[str, Any]]) -> bool:
    """Questions matched by key, so a row (and every learner's memory of it) keeps its text."""
    changed = _drop_missing(lesson.questions.all(), items)
    existing = {question.key: question for question in lesson.questions.all()}
    for number, item in enumerate(items, start=1):
        position = item.get("position") or number
        question = _keep_place(existing.get(item.get("key")), position, lesson, "question")
        question = question or Question(lesson=lesson, position=position)
        values = {
            "prompt": item["prompt"],
            "choices": carry_choice_ids(
                question.choices,
                [
                    {
                        "text": choice["text"],
                        "correct": choice["correct"],
                        "explanation": choice.get("explanation", ""),
                    }
                    for choice in item["choices"]
                ],
            ),
            "explanation": item["explanation"],
            "keep_choice_order": item.get("keep_choice_order", False),
        }
        if item.get("key"):
            values["key"] = item["key"]
        changed |= _save_if_changed(question, values)
    return changed


def _load_flashcards(lesson: Lesson, items: list[dict[str, Any]]) -> bool:
    changed = _drop_missing(lesson.flashcards.all(), items)
    existing = {card.key: card for card in lesson.flashcards.all()}
    for number, item in enumerate(items, start=1):
        position = item.get("position", number)
        card = existing.get(item.get("key")) or Flashcard(lesson=lesson)
        values = {"front": item["front"], "back": item["back"], "position": position}
        if item.get("key"):
            values["key"] = item["key"]
        changed |= _save_if_changed(card, values)
    return changed


def _drop_missing(rows, items: list[dict[str, Any]]) -> bool:
    """Delete the stored items the file no longer has (matched by key; unkeyed: by position)."""
    keys = {item.get("key") for item in items}
    positions = {item.get("position") for item in items if not item.get("key")}
    gone = [row.pk for row in rows if row.key not in keys and row.position not in positions]
    if gone:
        rows.model.objects.filter(pk__in=gone).delete()
    return bool(gone)


def _keep_place(question: Question | None, position: int, lesson: Lesson, kind: str):
    """A question keeps its position: moving questions around is done in the admin."""
    if question is not None and question.position != position:
        raise ValidationError(
            f"{lesson.public_id}: {kind} {question.key} is at position {question.position} here "
            f"and {position} in the file. Reorder questions in the admin, not in files."
        )
    return question


def _set_links(
    manager: Any, public_ids: list[str], loaded: dict[str, tuple[Lesson, dict[str, Any]]]
) -> None:
    targets = []
    for pid in public_ids:
        target = loaded[pid][0] if pid in loaded else Lesson.objects.filter(public_id=pid).first()
        if target is None:
            raise ValidationError(f"A link names the lesson {pid}, which does not exist.")
        targets.append(target)
    if {t.pk for t in targets} != set(manager.values_list("pk", flat=True)):
        manager.set(targets)


def lessons_import_directory(*, directory: Path) -> LoadResult:
    """Create or update every lesson in a folder of lesson files (*.md), all or nothing."""
    paths = sorted(directory.glob("*.md"))
    if not paths:
        raise ValidationError(f"{directory} holds no lesson files (*.md).")
    try:
        lessons = [
            markdown_to_lesson(path.read_text(encoding="utf-8"), source=path.name) for path in paths
        ]
    except (OSError, UnicodeDecodeError, LessonFileError) as error:
        raise ValidationError(str(error)) from error
    return lessons_load(lessons=lessons)


def lessons_export_directory(*, directory: Path) -> int:
    """Write every lesson to `<public id>.md` in a folder; returns how many were written."""
    directory.mkdir(parents=True, exist_ok=True)
    lessons = (
        Lesson.objects.select_related("subject", "area")
        .prefetch_related("needs_first", "connections", "questions", "flashcards")
        .order_by("public_id")
    )
    count = 0
    for lesson in lessons:
        (directory / f"{lesson.public_id}.md").write_text(
            lesson_to_markdown(lesson), encoding="utf-8"
        )
        count += 1
    return count


def report_create(
    *, lesson: Lesson, kind: str, message: str, question_position: int | None
) -> ProblemReport:
    """Store a learner's problem report with the lesson and, if named, the question."""
    question = (
        lesson.questions.filter(position=question_position).first() if question_position else None
    )
    return ProblemReport.objects.create(
        lesson=lesson, question=question, kind=kind, message=message.strip()
    )


def reports_move(*, reports, status: str) -> tuple[int, int]:
    """Move reports to a status where the workflow allows it; (moved, left as they were)."""
    moved = skipped = 0
    for report in reports:
        if report.can_move_to(status):
            report.status = status
            report.save(update_fields=["status", "updated_at"])
            moved += 1
        else:
            skipped += 1
    return moved, skipped
