"""A lesson's revisions in the admin: the list on its History page, a diff between any two,
and a restore that goes through an import's checks (lessons_load), never around them."""

from __future__ import annotations

import difflib
import re
from functools import partial
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.text import capfirst

from lessons import services
from lessons.files import LessonFileError, lesson_to_markdown, markdown_to_lesson
from lessons.models import Lesson, LessonRevision
from lightmysky.lib.numbers import small_int

# The fingerprint line changes with every revision; it says nothing an editor can read.
UNREAD_LINES = ("revision: ",)
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)")


def urls(model_admin) -> list:
    view = model_admin.admin_site.admin_view
    return [
        path(
            "<int:pk>/revisions/<int:revision_pk>/",
            view(partial(diff_view, model_admin)),
            name="lessons_lesson_revision",
        ),
        path(
            "<int:pk>/revisions/<int:revision_pk>/restore/",
            view(partial(restore_view, model_admin)),
            name="lessons_lesson_revision_restore",
        ),
    ]


def history_rows(lesson: Lesson) -> list[dict]:
    """The lesson's revisions, newest first, each with its diff against the one before."""
    revisions = list(lesson.revisions.select_related("author").defer("text"))
    rows = []
    for index, revision in enumerate(revisions):
        rows.append(
            {
                "revision": revision,
                "number": len(revisions) - index,
                "diff_url": reverse("admin:lessons_lesson_revision", args=[lesson.pk, revision.pk]),
                "restore_url": reverse(
                    "admin:lessons_lesson_revision_restore", args=[lesson.pk, revision.pk]
                ),
                "is_latest": index == 0,
            }
        )
    return rows


def diff_lines(before: str, after: str) -> list[tuple[str, str]]:
    """A unified diff of two lesson files as (kind, line) pairs: add, del, same, or hunk, a
    header that says at which line of the newer file the hunk's first change is."""
    lines = list(difflib.unified_diff(readable(before), readable(after), n=2))[2:]
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    result: list[tuple[str, str]] = []
    header, line_number = None, 0
    for line in lines:
        kind = kinds.get(line[:1], "same")
        if kind == "hunk":
            match = HUNK.match(line)
            line_number = int(match[1]) if match else 0
            header = len(result)
            result.append((kind, line))
            continue
        if kind != "same" and header is not None:
            result[header] = ("hunk", f"At line {line_number}:\n")
            header = None
        if kind != "del":
            line_number += 1
        result.append((kind, line))
    return result


def readable(text: str) -> list[str]:
    """The file's lines, the fingerprint's blanked out (so line numbers stay the file's)."""
    return [
        line.split(":")[0] + ": …\n" if line.startswith(UNREAD_LINES) else line
        for line in text.splitlines(keepends=True)
    ]


class NoSuchRevision(Exception):
    """The address names no revision this editor may see; the message says which part."""


def _lesson_and_revision(model_admin, request: HttpRequest, pk: int, revision_pk: int):
    lesson = model_admin.get_object(request, str(pk))
    if lesson is None or not model_admin.has_view_permission(request, lesson):
        raise NoSuchRevision("There is no such lesson.")
    revision = lesson.revisions.select_related("author").filter(pk=revision_pk).first()
    if revision is None:
        raise NoSuchRevision(
            "This lesson has no such revision: it may be another lesson's, or one of the "
            "oldest, which are pruned."
        )
    return lesson, revision


def _not_found(model_admin, request: HttpRequest, error: NoSuchRevision) -> HttpResponse:
    # Rendered here rather than raised as Http404: the site's 404 handler would send an admin
    # address back and forth between its forms with and without a trailing slash.
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "No such revision",
        "error": str(error),
    }
    return TemplateResponse(
        request, "admin/lessons/lesson/revision_missing.html", context, status=404
    )


def _context(model_admin, request: HttpRequest, lesson: Lesson, title: str) -> dict:
    return {
        **model_admin.admin_site.each_context(request),
        "opts": Lesson._meta,
        "original": lesson,
        "title": title,
        "history_url": reverse("admin:lessons_lesson_history", args=[lesson.pk]),
    }


def diff_view(model_admin, request: HttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    """What changed between this revision and an earlier one (by default, the one before)."""
    try:
        lesson, revision = _lesson_and_revision(model_admin, request, pk, revision_pk)
    except NoSuchRevision as error:
        return _not_found(model_admin, request, error)
    others = list(lesson.revisions.select_related("author").exclude(pk=revision.pk))
    older = [r for r in others if (r.created_at, r.pk) < (revision.created_at, revision.pk)]
    status = 200
    against = older[0] if older else None
    if "against" in request.GET:
        chosen = small_int(request.GET["against"])
        against = next((r for r in others if r.pk == chosen), None)
        if against is None:
            status = 400
    context = _context(model_admin, request, lesson, f"Changes to “{lesson.title}”")
    if status == 400:
        context["error"] = "That is not a revision of this lesson: pick one from the list."
        against = older[0] if older else None
    if against is None:
        first, second = None, revision
    elif (against.created_at, against.pk) < (revision.created_at, revision.pk):
        first, second = against, revision
    else:
        first, second = revision, against
    context |= {
        "revision": revision,
        "against": against,
        "before": first,
        "after": second,
        "others": others,
        "lines": diff_lines(first.text if first else "", second.text),
        "restore_url": reverse(
            "admin:lessons_lesson_revision_restore", args=[lesson.pk, revision.pk]
        ),
    }
    return TemplateResponse(
        request, "admin/lessons/lesson/revision_diff.html", context, status=status
    )


def restore_view(model_admin, request: HttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    """Show what restoring a revision changes and every problem an import would meet; on
    POST, restore it through the import with the editor's answers to what it asks."""
    try:
        lesson, revision = _lesson_and_revision(model_admin, request, pk, revision_pk)
    except NoSuchRevision as error:
        return _not_found(model_admin, request, error)
    if not model_admin.has_change_permission(request, lesson):
        raise PermissionDenied
    when = timezone.localtime(revision.created_at)
    source = f"revision of {date_format(when, 'DATETIME_FORMAT')}"  # as the History says it
    # What the page asks comes preselected with what keeps learners' data: their memory kept,
    # an answered question retired (its answers kept), so a restore never takes more than the
    # editor chose, here or on an earlier save.
    answers: dict[str, Any] = {
        "memories": _answer(request, "memories", services.MEMORY_DECISIONS),
        "missing": _answer(request, "missing", services.MISSING_DECISIONS),
        "unpublish": _answer(request, "unpublish", services.UNPUBLISH_DECISIONS),
    }
    context = _context(model_admin, request, lesson, f"Restore “{lesson.title}”")
    context |= {"revision": revision, "when": when}
    try:
        document = markdown_to_lesson(revision.text, source=source)
    except LessonFileError as error:  # kept before a check that it fails (invisible characters)
        context |= {
            "lines": diff_lines(lesson_to_markdown(lesson), revision.text),
            "problems": error.problems,
        }
        status = 400 if request.method == "POST" else 200
        return TemplateResponse(request, TEMPLATE, context, status=status)
    if request.method == "POST":
        try:
            result = services.lessons_load(
                lessons=[document],
                user_id=request.user.pk,
                revision_source=LessonRevision.Source.RESTORE,
                revision_note=f"Restored the {source}",
                force=True,  # the editor has seen what the lesson's latest changes become
                reorder=True,
                **answers,
            )
        except (LessonFileError, services.AnswerNeeded) as error:
            context |= _restore_preview(lesson, revision, document, answers)
            if isinstance(error, LessonFileError):
                context["problems"] = error.problems
            else:
                context["error"] = unanswered(error)
            return TemplateResponse(request, TEMPLATE, context, status=400)
        done = (
            f"Restored the {source}".removesuffix(".") + "."  # "… 8 p.m." takes no second one
            if result.updated
            else f"The {source} matches the lesson: nothing changed."
        )
        said = [
            f"{capfirst(line.where)}: {line.past.rstrip('.')}."
            for line in result.plan
            if line.touches_learners
        ]
        model_admin.message_user(request, " ".join([done, *said]), messages.SUCCESS)
        return redirect(reverse("admin:lessons_lesson_change", args=[lesson.pk]))
    context |= _restore_preview(lesson, revision, document, answers)
    return TemplateResponse(request, TEMPLATE, context)


def asks_on_page(result: services.LoadResult) -> dict:
    """What a load asks, for the shared questions (_learner_data_questions.html): the items
    each question is about, and whether an answered flashcard is among those left out."""
    asks = {kind: [line.where for line in lines] for kind, lines in result.asks.items()}
    return {
        "asks": asks,
        "missing_cards": result.asks_about_flashcards,
        "left_out": dict(zip(("questions", "cards"), result.answered_left_out, strict=True)),
    }


def unanswered(asked: services.AnswerNeeded) -> str:
    """Why a restore or an upload saved nothing: what it asks has no answer from the page."""
    if "unpublish" in asked.result.asks:
        return "Nothing was changed: tick the box to set the lesson back to draft, or cancel."
    if asked.result.asks_about_flashcards:
        return (
            "Nothing was changed: an answered flashcard that is left out cannot be retired. "
            "Choose to delete it, or cancel and put it back in the file."
        )
    return (
        "Nothing was changed: learners answered since this page was drawn, and what is asked "
        "below needs your answer."
    )


# What the restore and upload pages preselect: what keeps learners' data (no unpublishing).
SAFE_ANSWERS = {"memories": "keep", "missing": "retire", "unpublish": None}


def _answer(request: HttpRequest, name: str, allowed: tuple[str, ...]) -> str | None:
    value = request.POST.get(name)
    return value if value in allowed else SAFE_ANSWERS[name]


TEMPLATE = "admin/lessons/lesson/revision_restore.html"


def _restore_preview(lesson: Lesson, revision: LessonRevision, document: dict, answers) -> dict:
    """The diff from the lesson now to the revision, the plan of what restoring changes (in the
    future tense), its problems, and what it asks (with the editor's answers so far)."""
    result, problems = services.lessons_check(
        lessons=[document],
        force=True,
        reorder=True,
        revision_source=LessonRevision.Source.RESTORE,
    )
    return {
        "lines": diff_lines(lesson_to_markdown(lesson), revision.text),
        "plan": [(line.where, line.future) for line in result.plan],
        "problems": problems,
        **asks_on_page(result),
        "answers": answers,
        "changes": bool(result.updated),
    }
