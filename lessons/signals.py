"""Content changes move the content version on, whoever makes them (admin, import, shell).

A signal rather than a call in each writer: cache invalidation must not depend on every
future code path remembering it.
"""

from __future__ import annotations

from django.db.models.signals import m2m_changed, post_delete, post_save

from lessons.models import Area, ContentVersion, Flashcard, Lesson, Question, Subject

CONTENT_MODELS = (Subject, Area, Lesson, Question, Flashcard)


def content_changed(sender, **kwargs) -> None:
    if kwargs.get("action", "post_").startswith("post_"):
        ContentVersion.bump()


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
