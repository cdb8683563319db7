"""Writes to content from outside the admin: lesson files (and the demo), and problem reports."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import models, transaction
from django.utils import timezone
from django.utils.text import slugify

from lessons import learner_data, search
from lessons.files import (
    LessonFileError,
    Problem,
    lesson_revision,
    lesson_to_markdown,
    markdown_to_lesson,
    read_lesson_file,
)
from lessons.forms import publish_checklist, publish_problem_items
from lessons.models import (
    Area,
    Flashcard,
    Lesson,
    LessonRevision,
    ProblemReport,
    Question,
    Subject,
    carry_choice_ids,
    choice_letter,
    new_public_id,
    with_choice_ids,
)

LESSON_FIELDS = [
    "slug", "title", "summary", "age_from", "age_to", "heading", "body", "example", "tip",
    "recap", "transcript", "credits", "video", "status",
]  # fmt: skip
# How the admin's History tells an import's entries from editors' saves (see _refuse_conflict).
IMPORT_LOG_PREFIX = "Imported from the lesson file"
FILES_USER = "lesson-files"


@dataclass
class AssignedKey:
    """A key (or public id) an import gave an item the file left without one."""

    source: str
    line: int
    kind: str  # "question", "flashcard" or "lesson"
    key: str


@dataclass
class PlanLine:
    """One change a load makes (or would make) to a lesson's items, said in the future tense
    before it is made (`--check`, a restore's or an upload's preview) and in the past after."""

    source: str
    line: int
    where: str
    future: str
    past: str
    touches_learners: bool = False

    def words(self, *, future: bool) -> str:
        return f"{self.source}:{self.line}: {self.where}: {self.future if future else self.past}"


@dataclass
class LoadResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    notes: list[str] = field(default_factory=list)
    assigned: list[AssignedKey] = field(default_factory=list)
    plan: list[PlanLine] = field(default_factory=list)
    # What the load needs the editor's answer to before it may touch learners' data: "memories"
    # (reset or keep learners' memory of questions whose right answer changes) and "missing"
    # (retire or delete answered questions the file no longer has).
    asks: dict[str, list[PlanLine]] = field(default_factory=dict)
    # Markdown in the files that will not show as written: said, but not stopping the import.
    warnings: list[Problem] = field(default_factory=list)
    # A file's subject or area text differs from the site's, which the load left as it was.
    kept_shared_texts: bool = False

    def plan_in_words(self, *, future: bool) -> list[str]:
        return [line.words(future=future) for line in self.plan]

    @property
    def answered_left_out(self) -> tuple[int, int]:
        """How many answered questions and answered flashcards are left out (the items the
        "missing" question asks about)."""
        wheres = [line.where for line in self.asks.get("missing", [])]
        return (
            sum(where.startswith("question") for where in wheres),
            sum(where.startswith("flashcard") for where in wheres),
        )

    @property
    def asks_about_flashcards(self) -> bool:
        """Whether an answered flashcard is among the items left out: it cannot be retired, so
        the way on is to delete it or to put it back in the file."""
        return self.answered_left_out[1] > 0


class AnswerNeeded(Exception):
    """Raised at the end of a load (which rolls back) that would touch learners' data in a way
    the editor has not answered for; it carries the whole plan."""

    def __init__(self, result: LoadResult) -> None:
        super().__init__("The load needs the editor's answer: " + ", ".join(result.asks))
        self.result = result


MEMORY_DECISIONS = ("reset", "keep")
MISSING_DECISIONS = ("retire", "delete")
UNPUBLISH_DECISIONS = ("draft",)


class _Problems:
    """The problems found in one lesson file, each with its line."""

    def __init__(self, item: dict[str, Any], found: list[Problem]) -> None:
        self.item = item
        self.found = found
        self.source = item.get("source") or f"{item.get('public_id', 'lesson')}"

    def line(self, name: str) -> int:
        lines = self.item.get("lines", {})
        return lines.get(name) or lines.get("end") or 1

    def add(self, line: int, field_name: str, message: str) -> None:
        self.found.append(Problem(self.source, line, field_name, message))

    def add_error(self, error: ValidationError, *, line_of, prefix: str = "") -> None:
        if hasattr(error, "error_dict"):
            for name, errors in error.error_dict.items():
                for message in ValidationError(errors).messages:
                    label = (
                        f"{prefix}{name}"
                        if name != NON_FIELD_ERRORS
                        else prefix.strip() or "lesson"
                    )
                    self.add(line_of(name), label, message)
        else:
            for message in error.messages:
                self.add(line_of(NON_FIELD_ERRORS), prefix.strip() or "lesson", message)


def _assign(instance: models.Model, values: dict[str, Any]) -> list[str]:
    """Set the values on the instance; the names of those that differed."""
    changed = []
    for name, value in values.items():
        if getattr(instance, name) != value:
            setattr(instance, name, value)
            changed.append(name)
    return changed


def _save_if_changed(
    instance: models.Model,
    values: dict[str, Any],
    problems: _Problems | None = None,
    *,
    line_of=None,
    prefix: str = "",
    exclude: list[str] | None = None,
    save: bool = True,
) -> bool:
    """Assign, validate and save; with `problems`, validation errors are collected there (and
    the row is not saved) instead of raised."""
    changed = bool(_assign(instance, values)) or instance.pk is None
    if changed:
        try:
            instance.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
        except ValidationError as error:
            if problems is None:
                raise
            problems.add_error(error, line_of=line_of or problems.line, prefix=prefix)
            return changed
        if save:
            instance.save()
    return changed


def lessons_check(
    *, lessons: list[dict[str, Any]], **options: Any
) -> tuple[LoadResult, list[Problem]]:
    """What loading these lessons would do and every problem it would meet; writes nothing."""
    result = LoadResult()
    problems: list[Problem] = []
    try:
        with transaction.atomic():
            result = lessons_load(lessons=lessons, **options)
            transaction.set_rollback(True)
    except LessonFileError as error:
        problems = error.problems
    except AnswerNeeded as asked:
        result = asked.result
    return result, problems


@transaction.atomic
@search.refreshed_once()
def lessons_load(
    *,
    lessons: list[dict[str, Any]],
    memories: str | None = None,
    missing: str | None = None,
    unpublish: str | None = None,
    update_subjects: bool = False,
    force: bool = False,
    reorder: bool = False,
    user_id: int | None = None,
    revision_source: str = LessonRevision.Source.IMPORT,
    revision_note: str = "",
) -> LoadResult:
    """Create or update lessons (with their subjects and areas) by public id.

    Items are matched by key only: a question or flashcard written without a key is new.
    Loading the same lessons again writes nothing. Refused, with every problem named by file
    and line (LessonFileError), and nothing kept: a published lesson that breaks the publish
    rule, a lesson changed in the admin since its file was exported (unless `force`). What
    touches learners' data needs the editor's answer, else the load stops with the whole plan
    (AnswerNeeded) and nothing kept: `memories` ("reset" or "keep") for learners' memory of a
    question whose right choices change (by identity), `missing` ("retire" or "delete") for an
    answered question the file no longer has ("delete" also for an answered flashcard),
    `unpublish` ("draft") for a published lesson that learners practise set back to draft. A
    subject's or area's name and description are only set when it is new (or with
    `update_subjects`). A question's position changes only with `reorder` (a restore: files
    are refused, as a key moved in a file is more often a mistake than a reorder). Every lesson
    created or changed gets an admin log entry and a revision.
    """
    if (
        memories not in (None, *MEMORY_DECISIONS)
        or missing not in (None, *MISSING_DECISIONS)
        or unpublish not in (None, *UNPUBLISH_DECISIONS)
    ):
        raise ValueError(f"memories={memories!r}, missing={missing!r}, unpublish={unpublish!r}")
    result = LoadResult()
    found: list[Problem] = []
    loaded: dict[str, tuple[Lesson, dict[str, Any], _Problems]] = {}
    touched: dict[str, tuple[Lesson, bool, list[str]]] = {}
    before_history: dict[str, str] = {}  # lessons without revisions yet, as they were
    sources: dict[str, str] = {}
    for item in lessons:
        problems = _Problems(item, found)
        if pid := item.get("public_id"):
            if pid in sources:
                problems.add(
                    problems.line("public_id"),
                    "public_id",
                    f"{pid} is also the public id in {sources[pid]}: one lesson, one file",
                )
                continue
            sources[pid] = problems.source
        elif len(same := _public_ids(_lessons_by_subject_and_slug(item)[:3])) > 1:
            problems.add(
                problems.line("title"),
                "public_id",
                f"{' and '.join(same)} in this subject have this file's slug: add the public_id "
                "of the lesson it is about",
            )
            continue
        lesson = existing_lesson(item)
        if lesson and not item.get("public_id") and lesson.status == Lesson.Status.PUBLISHED:
            # What learners see changes only from a file that names it.
            by = "slug" if item.get("slug") else "title"
            matched = "this file's slug" if by == "slug" else "the slug this file's title makes"
            problems.add(
                problems.line(by),
                "public_id",
                f"the published lesson “{lesson.title}” ({lesson.public_id}) in this subject has "
                f'{matched}: to change it, add public_id: "{lesson.public_id}" to the file; for '
                f"a new lesson, give it another {by}",
            )
            continue
        is_new = lesson is None
        lesson = lesson or Lesson(public_id=item.get("public_id") or new_public_id())
        if is_new and not item.get("public_id"):
            result.assigned.append(AssignedKey(problems.source, 1, "lesson", lesson.public_id))
        if not is_new and not lesson.revisions.exists():
            before_history[lesson.public_id] = lesson_to_markdown(lesson)
        if not is_new and not force:
            _refuse_conflict(lesson, item, problems)
        subject, subject_made = _subject(item, update_subjects, problems)
        area, area_made = _area(subject, item, update_subjects, problems)
        values = {name: item[name] for name in LESSON_FIELDS if name in item}
        if "objectives" in item:
            values["objectives"] = "\n".join(item["objectives"])
        if is_new:
            values.setdefault("slug", slugify(item.get("title", ""))[:200])
            defaults = {name: "" for name in LESSON_FIELDS if name not in ("age_from", "age_to")}
            values = defaults | {"objectives": ""} | values
        if not values.get("status", lesson.status):
            values["status"] = Lesson.Status.DRAFT
        if subject.pk and area.pk:
            values |= {"subject_id": subject.pk, "area_id": area.pk}
        lesson_ok = subject.pk is not None and area.pk is not None
        before = len(found)
        values_before = {name: getattr(lesson, name) for name in values}
        changed = _save_if_changed(
            lesson,
            values,
            problems,
            line_of=problems.line,
            exclude=None if lesson_ok else ["subject", "area"],
            save=lesson_ok,
        )
        lesson_ok = lesson_ok and len(found) == before
        notes: list[str] = []
        load = _ItemsLoad(
            lesson,
            problems,
            result,
            notes,
            save=lesson_ok,
            memories=memories,
            missing=missing,
            reorder=reorder,
        )
        # A restore brings back its lesson, never the texts its subject shares with others.
        if not update_subjects and revision_source != LessonRevision.Source.RESTORE:
            _say_shared_texts_kept(load, item, subject, area)
        # A slug mistyped in a file makes a subject or area of its own: say so before it does.
        for kind, row, made in (("subject", subject, subject_made), ("area", area, area_made)):
            if made:
                what = f"a new {kind} “{row.name}” ({row.slug})"
                load.plan(problems.line(kind), kind, f"{what} will be created", f"{what} created")
        if is_new:
            load.plan(
                1, "lesson", "a new lesson will be created",
                f"new lesson (public id {lesson.public_id})",
            )  # fmt: skip
        elif fields := [n for n in values if values_before[n] != getattr(lesson, n)]:
            said = ", ".join(name.replace("_id", "").replace("_", " ") for name in fields)
            load.plan(1, "lesson", f"will change: {said}", f"changed: {said}")
            if values_before.get("status") == Lesson.Status.PUBLISHED and "status" in fields:
                _unpublishing(load, unpublish)
        changed |= _load_questions(load, item.get("questions", []))
        changed |= _load_flashcards(load, item.get("flashcards", []))
        if lesson.status == Lesson.Status.PUBLISHED:
            questions: list[tuple[int | None, Question]] = (
                [
                    (q["position"], Question(choices=q["choices"], explanation=q["explanation"]))
                    for q in item.get("questions", [])
                ]
                if not lesson_ok
                else [(q.position, q) for q in lesson.questions.all()]
            )
            lines = {q["position"]: q["line"] for q in item.get("questions", []) if "line" in q}
            for position, message in publish_problem_items(questions):
                line = lines.get(position) if position else problems.line("status")
                where = f"question {position}" if position else "status"
                problems.add(
                    line or problems.line("status"), where, f"cannot be published: {message}"
                )
            flashcards = len(item.get("flashcards", []))
            for need in publish_checklist(lesson=lesson, questions=[], flashcards=flashcards):
                for message in [] if need.part == "questions" else need.problems:
                    problems.add(
                        problems.line(need.part), need.part, f"cannot be published: {message}"
                    )
        loaded[lesson.public_id] = (lesson, item, problems)
        if is_new:
            result.created += 1
        elif changed:
            result.updated += 1
        else:
            result.unchanged += 1
        if is_new or changed:
            touched[lesson.public_id] = (lesson, is_new, notes)
        result.notes += notes

    # Connections go both ways: a link named on either side counts for both.
    connected = {pid: set(item.get("connections", [])) for pid, (_, item, _) in loaded.items()}
    for pid, (_, item, _) in loaded.items():
        if "connections" not in item:
            connected[pid] = set()
    for pid, others in list(connected.items()):
        for other in others:
            connected.setdefault(other, set()).add(pid)
    for pid, (lesson, item, problems) in loaded.items():
        if found or lesson.pk is None:
            # Nothing will be kept: only say which linked lessons do not exist.
            for name in ("needs_first", "connections"):
                _missing_links(item.get(name, []), loaded, problems, name)
            continue
        if "needs_first" in item:
            _set_links(lesson.needs_first, item["needs_first"], loaded, problems, "needs_first")
        if "connections" in item or connected[pid]:
            names = sorted(
                connected[pid]
                | set(
                    lesson.connections.values_list("public_id", flat=True)
                    if "connections" not in item
                    else []
                )
            )
            _set_links(lesson.connections, names, loaded, problems, "connections")
    if not found:
        for lesson, _item, problems in loaded.values():
            try:
                lesson.validate_needs_first(lesson.needs_first.all())
            except ValidationError as error:
                for message in error.messages:
                    problems.add(problems.line("needs_first"), "needs_first", message)
    if found:
        raise LessonFileError(sorted(found, key=lambda p: (p.source, p.line)))
    if result.asks:
        raise AnswerNeeded(result)
    _log_imports(touched, user_id)
    for public_id, (lesson, _, _) in touched.items():
        if public_id in before_history:
            _revision_before_history(lesson, before_history[public_id])
        lesson_revision_record(
            lesson=lesson, source=revision_source, author_id=user_id, note=revision_note
        )
    return result


def lesson_revision_record(
    *, lesson: Lesson, source: str, author_id: int | None = None, note: str = ""
) -> LessonRevision | None:
    """Keep the lesson as saved, as its lesson file, unless that is the latest revision
    already; beyond LessonRevision.KEPT_PER_LESSON the oldest revisions are deleted."""
    saved = Lesson.objects.select_related("subject", "area").get(pk=lesson.pk)
    text = lesson_to_markdown(saved)
    latest = saved.revisions.values_list("text", flat=True).first()
    if latest == text:
        return None
    revision = LessonRevision.objects.create(
        lesson=saved, source=source, author_id=author_id, note=note[:200], text=text
    )
    old = saved.revisions.values_list("pk", flat=True)[LessonRevision.KEPT_PER_LESSON :]
    LessonRevision.objects.filter(pk__in=list(old)).delete()
    return revision


def lesson_revision_before_change(*, lesson: Lesson) -> None:
    """Before the first change of a lesson made before revisions were kept, keep it as it is,
    so that change has something to be compared with and restored to."""
    if lesson.pk and not lesson.revisions.exists():
        saved = Lesson.objects.select_related("subject", "area").get(pk=lesson.pk)
        _revision_before_history(saved, lesson_to_markdown(saved))


def _revision_before_history(lesson: Lesson, text: str) -> None:
    if not lesson.revisions.exists():
        LessonRevision.objects.create(
            lesson=lesson, source=LessonRevision.Source.EARLIER, text=text
        )


def existing_lesson(item: dict[str, Any]) -> Lesson | None:
    """The lesson a file is about: by public id, or for a file without one, by subject and
    slug (so importing a new lesson's file twice does not make two lessons)."""
    if item.get("public_id"):
        return Lesson.objects.filter(public_id=item["public_id"]).first()
    return _lessons_by_subject_and_slug(item).first()


def _lessons_by_subject_and_slug(item: dict[str, Any]):
    """The lessons a file without a public id could be about: more than one when two lessons
    of its subject share a title (and so a slug), and then the file is ambiguous."""
    slug = item.get("slug") or slugify(item.get("title", ""))
    return Lesson.objects.filter(subject__slug=item.get("subject"), slug=slug).order_by("pk")


def _public_ids(lessons) -> list[str]:
    return list(lessons.values_list("public_id", flat=True))


def _refuse_conflict(lesson: Lesson, item: dict[str, Any], problems: _Problems) -> None:
    """A file exported before the lesson was last saved in the admin would undo that save."""
    exported = item.get("revision")
    if not exported:
        return
    current = lesson_revision(lesson)
    if current in (exported, item.get("revision_of_file")):
        return
    ct = ContentType.objects.get_for_model(Lesson)
    last = (
        LogEntry.objects.filter(content_type=ct, object_id=str(lesson.pk))
        .order_by("-action_time", "-pk")
        .first()
    )
    if last is None or last.change_message.startswith(IMPORT_LOG_PREFIX):
        return  # last changed by an import (or outside the admin), not by an editor's save
    who = f" by {last.user} on {last.action_time:%Y-%m-%d %H:%M} UTC"
    problems.add(
        problems.line("revision"),
        "revision",
        f"the lesson was changed in the admin{who} since this file was exported, and "
        "importing it would undo that change. Export the lesson again and redo your edits "
        "there; to overwrite that change anyway, delete this revision line from the file.",
    )


def _subject(item: dict[str, Any], update: bool, problems: _Problems) -> tuple[Subject, bool]:
    """The file's subject, and whether this load made it (a slug no subject had)."""
    if not item.get("subject"):
        return Subject(), False
    subject = Subject.objects.filter(slug=item["subject"]).first()
    if subject is not None and not update:
        return subject, False
    subject = subject or Subject(slug=item["subject"])
    new = subject.pk is None
    values = {"name": item.get("subject_name") or subject.name or item["subject"]}
    if "subject_description" in item:
        values["description"] = item["subject_description"]
    line = problems.line("subject")
    before = len(problems.found)
    _save_if_changed(
        subject, values, problems, line_of=lambda name: line, prefix="subject ", save=False
    )
    if len(problems.found) == before and (new or update):
        subject.save()
    return subject, new and subject.pk is not None


def _say_shared_texts_kept(load: _ItemsLoad, item: dict[str, Any], subject, area) -> None:
    """A file's subject or area name or description that differs from the site's is left as it
    is (other lessons share it): said, not passed over in silence."""
    for key, row, attribute in (
        ("subject_name", subject, "name"),
        ("subject_description", subject, "description"),
        ("area_name", area, "name"),
    ):
        if row.pk and key in item and item[key] != getattr(row, attribute):
            what = key.replace("_", " ")
            kept = (
                f"the file's {what} differs from the site's and is left as it is (other lessons "
                f"share it): change it on the {key.split('_')[0]}'s admin page"
            )
            load.plan(load.problems.line(key), key.split("_")[0], kept, kept)
            load.result.kept_shared_texts = True


def _area(
    subject: Subject, item: dict[str, Any], update: bool, problems: _Problems
) -> tuple[Area, bool]:
    """The file's area, and whether this load made it."""
    if not item.get("area") or subject.pk is None:
        return Area(), False
    area = Area.objects.filter(subject=subject, slug=item["area"]).first()
    if area is not None and not update:
        return area, False
    area = area or Area(subject=subject, slug=item["area"])
    new = area.pk is None
    values = {"name": item.get("area_name") or area.name or item["area"]}
    line = problems.line("area")
    before = len(problems.found)
    _save_if_changed(area, values, problems, line_of=lambda name: line, prefix="area ", save=False)
    if len(problems.found) == before:
        area.save()
    return area, new and area.pk is not None


@dataclass
class _ItemsLoad:
    """One lesson's questions or flashcards being loaded from its file: where problems, notes,
    the plan and counts go, whether the load may write, and the editor's answers (None: not
    given, so asked) on learners' memories and on answered questions the file no longer has."""

    lesson: Lesson
    problems: _Problems
    result: LoadResult
    notes: list[str]
    save: bool
    memories: str | None
    missing: str | None
    now: Any = None
    reorder: bool = False

    def plan(self, line: int, where: str, future: str, past: str, *, learners: bool = False):
        entry = PlanLine(self.problems.source, line, where, future, past, learners)
        self.result.plan.append(entry)
        self.notes.append(entry.words(future=False))  # what the import did, once it is done
        return entry

    def ask(self, kind: str, entry: PlanLine) -> None:
        self.result.asks.setdefault(kind, []).append(entry)

    def match_and_drop(
        self, stored: list, items: list[dict[str, Any]], retired: list | None = None
    ) -> tuple[dict, bool, bool]:
        """The stored rows (and retired ones) matched to the file's items (by key only), whether
        rows the file no longer has were dropped, and whether the load may still write."""
        existing = _match(stored + (retired or []), items)
        before = len(self.problems.found)
        changed, asked = _drop_missing(self, stored, existing, items)
        return existing, changed, self.save and not asked and len(self.problems.found) == before


def _load_questions(load: _ItemsLoad, items: list[dict[str, Any]]) -> bool:
    """Questions matched by key: a question the file writes without one is new, so a row (and
    every learner's memory of it) never passes to another question by its place."""
    lesson, problems = load.lesson, load.problems
    stored, retired = [], []
    if lesson.pk:
        stored = list(lesson.questions.all())
        # A file from before "Replace this question" names the question it retired: it comes back.
        retired = list(Question.everything.filter(lesson=lesson, retired_at__isnull=False))
    existing, changed, save = load.match_and_drop(stored, items, retired)
    # The places of the questions the file keeps, as they are in the admin now.
    kept_at = {row.position: row for row in existing.values() if row.retired_at is None}
    moving = {
        id(item): question
        for item in items
        if load.reorder
        and (question := existing.get(id(item))) is not None
        and question.retired_at is None
        and question.position != item["position"]
    }
    if moving:
        # Out of the way first, so that no two share a place while each takes its new one.
        kept_at = {place: row for place, row in kept_at.items() if row not in moving.values()}
        if save:
            pks = [question.pk for question in moving.values()]
            Question.objects.filter(pk__in=pks).update(position=models.F("position") + 100)
    for item in items:
        where = f"question {item['position']}"
        line = item.get("line") or problems.line("end")
        question = existing.get(id(item))
        back = bool(question and question.retired_at)
        holder = kept_at.get(item["position"])
        if (question is None or back) and holder is not None:
            continue  # the file has the holder elsewhere: a reorder, refused on its own line
        if question and back:
            what = f"the retired question “{_short(question.prompt)}” (key {question.key})"
            load.plan(
                line, where,
                f"{what} will be brought back, with its answers; learners start it afresh",
                f"{what} was brought back, with its answers; learners start it afresh",
                learners=True,
            )  # fmt: skip
        elif mover := moving.get(id(item)):
            what = f"question {mover.key} will move from position {mover.position}"
            load.plan(
                line, where, f"{what} to {item['position']}",
                f"question {mover.key} moved from position {mover.position} to "
                f"{item['position']}",
            )  # fmt: skip
        elif question is not None and question.position != item["position"]:
            problems.add(
                line,
                where,
                f"question {question.key} is at position {question.position} in the admin and "
                f"{item['position']} in the file. Reorder questions in the admin, not in files.",
            )
            continue
        question = question or Question(lesson=lesson, position=item["position"])
        before = {"choices": list(question.choices or [])}
        right_before = question.correct_ids if question.pk else None
        values = {
            "prompt": item["prompt"],
            "choices": file_choices(question.choices or [], item["choices"]),
            "explanation": item["explanation"],
            "keep_choice_order": item.get("keep_choice_order", False),
        }
        if item.get("key"):
            values["key"] = item["key"]
        if back:
            values |= {"retired_at": None, "position": item["position"]}
        elif id(item) in moving:
            values["position"] = item["position"]
        item_changed, saved = _save_item(
            load, question, values, item, "question", where, line, save=save
        )
        changed |= item_changed
        if right_before is not None and right_before != question.correct_ids:
            _right_answer_changed(load, question, before["choices"], line, where, saved=saved)
    return changed


def file_choices(stored: list[dict], written: list[dict]) -> list[dict]:
    """A question's choices as its file writes them, each keeping the identity its id names; a
    choice written without an id is new. A file from before choices had ids in files (no choice
    of the question has one) is matched as it was then: by text, else by place."""
    choices = [
        {"text": c["text"], "correct": c["correct"], "explanation": c.get("explanation", "")}
        | ({"id": c["id"]} if c.get("id") else {})
        for c in written
    ]
    if any(c.get("id") for c in written):
        return with_choice_ids(choices)
    return carry_choice_ids(stored, choices)


def choice_changes(before: list[dict], after: list[dict]) -> list[str]:
    """What happened to a question's choices, by their identities: reworded, added, removed,
    moved, and which is right."""
    old = {c["id"]: (index, c) for index, c in enumerate(before) if c.get("id")}
    new = {c["id"]: (index, c) for index, c in enumerate(after) if c.get("id")}
    words = []
    for choice_id, (index, choice) in new.items():
        letter = choice_letter(index)
        if choice_id not in old:
            words.append(f"choice {letter} “{choice['text']}” added")
        elif old[choice_id][1]["text"] != choice["text"]:
            words.append(f"choice {letter} reworded (was “{old[choice_id][1]['text']}”)")
    for choice_id, (index, choice) in old.items():
        if choice_id not in new:
            words.append(f"choice {choice_letter(index)} “{choice['text']}” removed")
    kept = [choice_id for choice_id in new if choice_id in old]
    if sorted(kept, key=lambda i: new[i][0]) != sorted(kept, key=lambda i: old[i][0]):
        words.append("choices reordered")
    right_before = [c["text"] for c in before if c.get("correct")]
    right_after = [c["text"] for c in after if c.get("correct")]
    if {c["id"] for c in before if c.get("correct")} != {
        c["id"] for c in after if c.get("correct")
    }:
        words.append(f"the right answer {_quoted(right_before)} becomes {_quoted(right_after)}")
    return words


def _unpublishing(load: _ItemsLoad, unpublish: str | None) -> None:
    """A published lesson set back to draft leaves the sky of every learner who practises it
    (a 404 on its pages): the editor says so first, as on the lesson's page."""
    learners = learner_data.learners_of(load.lesson)
    if not learners:
        return
    some = f"{learners} learner{' practises' if learners == 1 else 's practise'} it"
    entry = load.plan(
        load.problems.line("status"), "status",
        f"Set back to draft: {some}, and it leaves their sky until it is published again",
        f"set back to draft: {some}, and it left their sky until it is published again",
        learners=True,
    )  # fmt: skip
    if unpublish != "draft":
        load.ask("unpublish", entry)


def _quoted(texts: list[str]) -> str:
    return " and ".join(f"“{text}”" for text in texts) or "none"


def _right_answer_changed(
    load: _ItemsLoad, question: Question, before: list[dict], line: int, where: str, *, saved: bool
) -> None:
    """Another choice is right now: learners' memory of the question is reset or kept as the
    editor answered; without an answer, the load asks."""
    remembering = learner_data.remembering(question)
    if not remembering:
        return
    was = _quoted([c["text"] for c in before if c.get("correct")])
    now = _quoted([c["text"] for c in question.choices if c.get("correct")])
    change = f"the right answer changes from {was} to {now}"
    learners = learners_possessive(remembering)
    if load.memories == "keep":
        load.plan(
            line, where, f"{change}; {learners} memory of it will be kept",
            f"{change}; {learners} memory of it kept", learners=True,
        )  # fmt: skip
        return
    if load.memories is None:
        remember = f"{remembering} learner{'s remember' if remembering != 1 else ' remembers'}"
        entry = load.plan(
            line, where, f"{change}; {remember} it: reset or keep their memory?",
            f"{change}", learners=True,
        )  # fmt: skip
        load.ask("memories", entry)
        return
    reset = learner_data.forget(question) if saved else remembering
    load.plan(
        line, where, f"{change}; {learners} memory of it will be reset (answers kept)",
        f"{change}; {learners_possessive(reset)} memory of it reset (their answers are kept)",
        learners=True,
    )  # fmt: skip


def _load_flashcards(load: _ItemsLoad, items: list[dict[str, Any]]) -> bool:
    lesson, problems = load.lesson, load.problems
    stored = list(lesson.flashcards.all()) if lesson.pk else []
    existing, changed, save = load.match_and_drop(stored, items)
    for item in items:
        where = f"flashcard {item['position']}"
        line = item.get("line") or problems.line("end")
        card = existing.get(id(item)) or Flashcard(lesson=lesson)
        values = {"front": item["front"], "back": item["back"], "position": item["position"]}
        if item.get("key"):
            values["key"] = item["key"]
        item_changed, _ = _save_item(load, card, values, item, "flashcard", where, line, save=save)
        changed |= item_changed
    return changed


def _save_item(
    load: _ItemsLoad, row, values, item, kind, where, line, *, save: bool
) -> tuple[bool, bool]:
    """Save one question or flashcard of a file if it changed (or only check it), say what
    changes in the plan, and report the key given to a new item the file left without one.
    Returns (changed, saved)."""
    problems = load.problems
    is_new = row.pk is None
    before = {name: getattr(row, name) for name in values}
    before_problems = len(problems.found)
    changed = _save_if_changed(
        row,
        values,
        problems,
        line_of=lambda name: line,
        prefix=f"{where} ",
        exclude=["lesson"] if not save else None,
        save=save,
    )
    saved = save and len(problems.found) == before_problems
    if is_new:
        named = f" (key {row.key})" if item.get("key") else ""
        load.plan(
            line, where, f"a new {kind}{named} will be created", f"new {kind} (key {row.key})"
        )
    elif changed:
        fields = [name for name in values if before[name] != getattr(row, name)]
        details = []
        for name in fields:
            if name == "choices":
                details += choice_changes(before["choices"], row.choices) or ["choices"]
            elif name not in ("key", "retired_at"):  # a question brought back says so itself
                details.append(name.replace("_", " "))
        if said := ", ".join(details):
            load.plan(line, where, f"will change: {said}", f"changed: {said}")
    if saved and is_new and not item.get("key"):
        load.result.assigned.append(AssignedKey(problems.source, line, kind, row.key))
    return changed, saved


def _match(stored: list, items: list[dict[str, Any]]) -> dict[int, Any]:
    """The stored row each file item is, by key, as {id(item): row}; an item the file writes
    without a key is new."""
    by_key = {row.key: row for row in stored}
    return {
        id(item): by_key[item["key"]] for item in items if item.get("key") and item["key"] in by_key
    }


def _drop_missing(
    load: _ItemsLoad, stored: list, matched: dict[int, Any], items: list[dict[str, Any]]
) -> tuple[bool, bool]:
    """Take out the stored items the file no longer has. One that learners have answered is
    asked about: a question is retired (its answers stay with it) or deleted with its answers,
    as the editor answered; a flashcard can only be deleted."""
    kept = {row.pk for row in matched.values()}
    gone = [row for row in stored if row.pk not in kept]
    if not gone:
        return False, False
    model = type(gone[0])
    kind = model._meta.model_name
    answers = learner_data.answers_to(gone)
    newcomers = {item["position"] for item in items if id(item) not in matched}
    refused = False
    for row in gone:
        count, learners = answers.get(row.pk, (0, 0))
        label = f"{kind} {row.position}"
        text = row.prompt if kind == "question" else row.front
        what = f"“{_short(text)}” (key {row.key})"
        if kind == "question" and row.position in newcomers:
            what = f"the new question replaces {what}, which"
        else:
            what = f"{what} is left out and"
        line = load.problems.line("end")
        if not count:
            load.plan(line, label, f"{what} will be deleted", f"{what} was deleted")
            continue
        held = (
            f"{count} answer{'s' if count != 1 else ''} from {learners} "
            f"learner{'s' if learners != 1 else ''}"
        )
        decision = load.missing
        if kind != "question" and decision == "retire":
            decision = None  # a flashcard cannot be retired
        if decision is None:
            if kind == "question":
                ask = f"{what} has {held}: retire it (its answers stay with it) or delete it?"
            else:
                ask = f"{what} has {held}: put it back (with its key), or delete it with them?"
            load.ask("missing", load.plan(line, label, ask, ask, learners=True))
            refused = True
        elif decision == "retire":
            load.plan(
                line, label,
                f"{what} will be retired, keeping its {held}; learners' memory of it ends",
                f"{what} was retired, keeping its {held}", learners=True,
            )  # fmt: skip
        else:
            load.plan(
                line, label, f"{what} will be deleted with {held}",
                f"{what} was deleted with {held}", learners=True,
            )  # fmt: skip
    if load.save and not refused:
        for row in gone:
            count, _ = answers.get(row.pk, (0, 0))
            if kind == "question" and count and load.missing == "retire":
                question_retire(question=row)
            else:
                row.delete()
    return True, refused


def learners_possessive(count: int) -> str:
    """ "1 learner's" or "3 learners'", before "memory"."""
    return f"{count} learner's" if count == 1 else f"{count} learners'"


def _short(text: str, words: int = 12) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def question_retire(*, question: Question, now=None) -> int:
    """Take a question out of its lesson for good, keeping its learners' answers with it; their
    memories of it end. Returns how many learners remembered it."""
    ended = learner_data.forget(question)
    question.retired_at = now or timezone.now()
    question.save(update_fields=["retired_at"])
    return ended


def _missing_links(
    public_ids: list[str], loaded: dict, problems: _Problems, name: str
) -> list[Lesson]:
    """The lessons named, each found in this import or the database; the others reported."""
    targets = []
    for pid in public_ids:
        target = loaded[pid][0] if pid in loaded else Lesson.objects.filter(public_id=pid).first()
        if target is None:
            problems.add(problems.line(name), name, f"names the lesson {pid}, which does not exist")
            continue
        targets.append(target)
    return targets


def _set_links(
    manager: Any, public_ids: list[str], loaded: dict, problems: _Problems, name: str
) -> None:
    before = len(problems.found)
    targets = _missing_links(public_ids, loaded, problems, name)
    if len(problems.found) == before and {t.pk for t in targets} != set(
        manager.values_list("pk", flat=True)
    ):
        manager.set(targets)


def _log_imports(touched: dict[str, tuple[Lesson, bool, list[str]]], user_id: int | None) -> None:
    """An admin log entry for every lesson an import created or changed, so History shows it."""
    if not touched:
        return
    if user_id is None:
        user_id = _files_user_id()
    for lesson, is_new, notes in touched.values():
        message = f"{IMPORT_LOG_PREFIX}."
        if notes:
            message = f"{IMPORT_LOG_PREFIX}: " + "; ".join(n.split(": ", 1)[-1] for n in notes)
        LogEntry.objects.log_actions(
            user_id=user_id,
            queryset=[lesson],
            action_flag=ADDITION if is_new else CHANGE,
            change_message=message[:2000],
            single_object=True,
        )


def _files_user_id() -> int:
    """The account imports from the command line are logged under: inactive, no password."""
    user, created = User.objects.get_or_create(
        username=FILES_USER, defaults={"is_active": False, "first_name": "Lesson files"}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user.pk


def lessons_import_directory(
    *, directory: Path, check: bool = False, **options: Any
) -> tuple[LoadResult, list[Problem]]:
    """Create or update every lesson in a folder of lesson files (*.md), all or nothing; with
    `check`, only say what would happen. Returns the result and every problem (with problems,
    nothing was written)."""
    paths = sorted(directory.glob("*.md"))
    if not paths:
        raise ValidationError(f"{directory} holds no lesson files (*.md).")
    lessons, problems = read_lesson_files(paths)
    warnings = [warning for lesson in lessons for warning in lesson["warnings"]]
    if problems:
        # Still check the files that could be read, so one pass names every problem.
        _, more = lessons_check(lessons=lessons, **options) if lessons else (None, [])
        return LoadResult(warnings=warnings), problems + more
    if check:
        result, problems = lessons_check(lessons=lessons, **options)
    else:
        try:
            result, problems = lessons_load(lessons=lessons, **options), []
        except LessonFileError as error:
            result, problems = LoadResult(), error.problems
        except AnswerNeeded as asked:  # nothing was written; the result says what to answer
            result, problems = asked.result, []
    result.warnings = warnings
    return result, problems


def read_lesson_files(paths: list[Path]) -> tuple[list[dict[str, Any]], list[Problem]]:
    lessons, problems = [], []
    for path in paths:
        try:
            lessons.append(markdown_to_lesson(read_lesson_file(path), source=path.name))
        except LessonFileError as error:
            problems += error.problems
        except OSError as error:
            problems.append(Problem(path.name, 1, "file", f"cannot be read: {error}"))
    return lessons, problems


def lesson_files_write_keys(*, directory: Path, assigned: list[AssignedKey]) -> int:
    """Write the keys an import assigned back into their files; returns how many."""
    by_source: dict[str, list[AssignedKey]] = {}
    for key in assigned:
        by_source.setdefault(key.source, []).append(key)
    count = 0
    for source, keys in by_source.items():
        path = directory / source
        lines = path.read_text(encoding="utf-8").replace("\r\n", "\n").split("\n")
        for key in keys:
            if key.kind == "lesson":
                lines.insert(1, f"public_id: {json.dumps(key.key)}")
                continue
        offset = 1 if any(k.kind == "lesson" for k in keys) else 0
        for key in keys:
            if key.kind == "lesson":
                continue
            index = key.line - 1 + offset
            words = lines[index].split()
            # `::: question 3` or `::: question 3 keep-choice-order`: the key goes after the number
            words.insert(3, key.key)
            lines[index] = " ".join(words)
            count += 1
        count += offset
        path.write_text("\n".join(lines), encoding="utf-8")
    return count


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


def reports_move(*, reports, status: str, user_id: int) -> tuple[int, int]:
    """Move reports to a status where the workflow allows it, each move in the admin's log;
    returns (moved, left as they were)."""
    moved, skipped = [], 0
    for report in reports:
        if report.can_move_to(status):
            report.status = status
            report.save(update_fields=["status", "updated_at"])
            moved.append(report)
        else:
            skipped += 1
    label = ProblemReport.Status(status).label.lower()
    _log_report_changes(moved, user_id, f"Marked {label} with others (bulk action).")
    return len(moved), skipped


def reports_assign(*, reports, user: User) -> int:
    """Assign reports to an editor, each change in the admin's log; returns how many changed."""
    changed = [report for report in reports if report.assigned_to_id != user.pk]
    ProblemReport.objects.filter(pk__in=[report.pk for report in changed]).update(assigned_to=user)
    _log_report_changes(changed, user.pk, f"Assigned to {user.get_username()} (bulk action).")
    return len(changed)


def _log_report_changes(reports: list[ProblemReport], user_id: int, message: str) -> None:
    if reports:
        LogEntry.objects.log_actions(
            user_id=user_id, queryset=reports, action_flag=CHANGE, change_message=message
        )
