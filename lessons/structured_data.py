"""schema.org data for search engines: a lesson as a LearningResource with its quiz."""

from __future__ import annotations

import json

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe

from lessons.models import Lesson, Question

# Keep "</script>" and friends out of the JSON so it cannot close its script element.
_SCRIPT_SAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def learning_resource(lesson: Lesson, questions: list[Question]) -> SafeString:
    url = settings.SITE_URL + lesson.get_absolute_url()
    data = {
        "@context": "https://schema.org",
        "@type": "LearningResource",
        "name": lesson.title,
        "description": lesson.summary,
        "url": url,
        "inLanguage": "en-GB",
        "isAccessibleForFree": True,
        "learningResourceType": "Lesson",
        "educationalLevel": f"Ages {lesson.age_from} to {lesson.age_to}",
        "typicalAgeRange": f"{lesson.age_from}-{lesson.age_to}",
        "about": {"@type": "Thing", "name": lesson.subject.name},
        "teaches": lesson.objective_list,
        "dateModified": lesson.updated_at.date().isoformat(),
        "hasPart": {
            "@type": "Quiz",
            "name": f"Practice: {lesson.title}",
            "url": settings.SITE_URL + lesson.get_practice_url(),
            "hasPart": [_question(question) for question in questions],
        },
    }
    return mark_safe(json.dumps(data, ensure_ascii=False).translate(_SCRIPT_SAFE))  # noqa: S308


def _question(question: Question) -> dict:
    choices = question.labelled_choices
    return {
        "@type": "Question",
        "name": question.prompt,
        "eduQuestionType": "Multiple choice",
        "acceptedAnswer": [{"@type": "Answer", "text": c["text"]} for c in choices if c["correct"]],
        "suggestedAnswer": [
            {"@type": "Answer", "text": c["text"]} for c in choices if not c["correct"]
        ],
    }
