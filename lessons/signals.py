"""Content changes move the content version on and keep the search index in step, whoever
makes them (admin, import, shell).

A signal rather than a call in each writer: cache invalidation and the search index must not
depend on every future code path remembering them. Bulk writes send no signals: whoever makes
one bumps the version and runs `rebuild_search_index` (tools/catalogue.py does both).
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_save

from lessons import search
from lessons.models import Area, ContentVersion, Flashcard, Lesson, Question, Subject

CONTENT_MODELS = (Subject, Area, Lesson, Question, Flashcard)
# What search reads: a lesson's own texts and its questions' prompts and choices.
SEARCHED_MODELS = (Lesson, Question)


def content_changed(sender, **kwargs) -> None:
    if kwargs.get("action", "post_").startswith("post_"):
        ContentVersion.bump()


def searched_content_changed(sender, instance, **kwargs) -> None:
    """Re-index the lesson that changed (a publish, an edit, an unpublish, a deletion)."""
    origin = kwargs.get("origin")
    deleting_a_lesson = isinstance(origin, Lesson) or (
        isinstance(origin, QuerySet) and origin.model is Lesson
    )
    if sender is Question and deleting_a_lesson:
        return  # its lesson is going, and its entry with it (on_delete=CASCADE)
    search.lessons_changed([instance.pk if sender is Lesson else instance.lesson_id])


def connect() -> None:
    for model in CONTENT_MODELS:
        post_save.connect(
            content_changed, sender=model, dispatch_uid=f"version-save-{model.__name__}"
        )
        post_delete.connect(
            content_changed, sender=model, dispatch_uid=f"version-delete-{model.__name__}"
        )
    for through in (Lesson.needs_first.through, Lesson.connections.through):
        m2m_changed.connect(
            content_changed, sender=through, dispatch_uid=f"version-m2m-{through.__name__}"
        )
    for model in SEARCHED_MODELS:
        post_save.connect(
            searched_content_changed, sender=model, dispatch_uid=f"search-save-{model.__name__}"
        )
        post_delete.connect(
            searched_content_changed,
            sender=model,
            dispatch_uid=f"search-delete-{model.__name__}",
        )
