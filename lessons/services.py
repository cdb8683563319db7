"""Writes to content that do not come through the admin: loading the demo and lesson files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction

from lessons.models import Area, Flashcard, Lesson, Question, Subject

LESSON_FIELDS = [
    "slug",
    "title",
    "summary",
    "age_from",
    "age_to",
    "heading",
    "body",
    "example",
    "tip",
    "recap",
    "transcript",
    "credits",
]


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
def content_load(*, data: dict[str, Any], publish: bool = True) -> LoadResult:
    """Create or update subjects, areas and lessons from a content document, by their ids.

    Running it again with the same document writes nothing.
    """
    result = LoadResult()
    subjects = {}
    for position, item in enumerate(data.get("subjects", [])):
        subject = Subject.objects.filter(slug=item["slug"]).first() or Subject(slug=item["slug"])
        _save_if_changed(
            subject,
            {
                "name": item["name"],
                "description": item.get("description", ""),
                "position": position,
            },
        )
        subjects[subject.slug] = subject
    areas = {}
    for position, item in enumerate(data.get("areas", [])):
        subject = subjects.get(item["subject"]) or Subject.objects.get(slug=item["subject"])
        area = Area.objects.filter(subject=subject, slug=item["slug"]).first() or Area(
            subject=subject, slug=item["slug"]
        )
        _save_if_changed(area, {"name": item["name"], "position": position})
        areas[(subject.slug, area.slug)] = area

    lessons = {}
    for item in data.get("lessons", []):
        lesson = Lesson.objects.filter(public_id=item["public_id"]).first()
        is_new = lesson is None
        lesson = lesson or Lesson(public_id=item["public_id"])
        subject = subjects.get(item["subject"]) or Subject.objects.get(slug=item["subject"])
        area = areas.get((subject.slug, item["area"])) or Area.objects.get(
            subject=subject, slug=item["area"]
        )
        values = {name: item.get(name, "") for name in LESSON_FIELDS}
        values |= {
            "subject_id": subject.pk,
            "area_id": area.pk,
            "objectives": "\n".join(item["objectives"]),
        }
        if publish:
            values["status"] = Lesson.Status.PUBLISHED
        changed = _save_if_changed(lesson, values)
        changed |= _load_questions(lesson, item["questions"])
        changed |= _load_flashcards(lesson, item.get("flashcards", []))
        lessons[lesson.public_id] = (lesson, item)
        if is_new:
            result.created += 1
        elif changed:
            result.updated += 1
        else:
            result.unchanged += 1

    # Connections go both ways: a link named on either side counts for both.
    connected = {pid: set(item.get("connections", [])) for pid, (_, item) in lessons.items()}
    for pid, others in list(connected.items()):
        for other in others:
            connected.setdefault(other, set()).add(pid)
    for pid, (lesson, item) in lessons.items():
        _set_links(lesson.needs_first, item.get("needs_first", []), lessons)
        _set_links(lesson.connections, sorted(connected[pid]), lessons)
    return result


def _load_questions(lesson: Lesson, items: list[dict[str, Any]]) -> bool:
    existing = {question.position: question for question in lesson.questions.all()}
    changed = False
    for position, item in enumerate(items, start=1):
        question = existing.pop(position, None) or Question(lesson=lesson, position=position)
        values = {
            "prompt": item["prompt"],
            "choices": [
                {
                    "text": choice["text"],
                    "correct": choice["correct"],
                    "explanation": choice.get("explanation", ""),
                }
                for choice in item["choices"]
            ],
            "explanation": item["explanation"],
        }
        changed |= _save_if_changed(question, values)
    if existing:
        Question.objects.filter(pk__in=[q.pk for q in existing.values()]).delete()
        changed = True
    return changed


def _load_flashcards(lesson: Lesson, items: list[dict[str, Any]]) -> bool:
    existing = {card.position: card for card in lesson.flashcards.all()}
    changed = False
    for position, item in enumerate(items, start=1):
        card = existing.pop(position, None) or Flashcard(lesson=lesson, position=position)
        changed |= _save_if_changed(card, {"front": item["front"], "back": item["back"]})
    if existing:
        Flashcard.objects.filter(pk__in=[card.pk for card in existing.values()]).delete()
        changed = True
    return changed


def _set_links(
    manager: Any, public_ids: list[str], loaded: dict[str, tuple[Lesson, dict[str, Any]]]
) -> None:
    targets = [
        loaded[pid][0] if pid in loaded else Lesson.objects.get(public_id=pid) for pid in public_ids
    ]
    if {t.pk for t in targets} != set(manager.values_list("pk", flat=True)):
        manager.set(targets)


def content_load_file(*, path: Path, publish: bool = True) -> LoadResult:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValidationError(f"Cannot read {path}: {error}") from error
    return content_load(data=data, publish=publish)
