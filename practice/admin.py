"""How learners do, shown beside the content that editors write.

The lesson and question pages of the admin belong to the content (lessons.admin); this module
registers them again with the figures that come from learners' answers: per question and
flashcard on a lesson's page, and sortable columns in the question list. So the content's code
never imports practice, and the editors still see everything on one page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import pluralize
from django.utils.html import format_html, format_html_join

from lessons.admin import LessonAdmin, QuestionAdmin, percent_of, warning_list
from lessons.models import Lesson, Question
from practice import analytics

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

ANALYTICS_NOTE = (
    "Only evidence counts: each learner's first answer to a question given on this site, never "
    "a retry after the answer was shown, nor answers imported from a progress file, nor staff "
    "previews (answers by a signed-in editor, or to a draft). "
    "Discrimination runs from -1 to 1: how much better the learners who got this question "
    "right did on the lesson's other questions (above 0.2 is good; below 0, check the key). "
    "Plain-word flags appear once a question has 20 learners."
)


class QuestionStats(TypedDict):
    attempts: int
    learners: int
    right_first_share: float | None
    lapses: int
    mean_difficulty: float | None


type QuestionWithStats = WithAnnotations[Question, QuestionStats]


class LessonWithAnalyticsAdmin(LessonAdmin):
    readonly_fields = [*LessonAdmin.readonly_fields, "question_analytics", "flashcard_analytics"]
    fieldsets = [
        *LessonAdmin.fieldsets[:-1],
        (
            "How learners do",
            {
                "fields": ["question_analytics", "flashcard_analytics"],
                "description": ANALYTICS_NOTE,
            },
        ),
        LessonAdmin.fieldsets[-1],
    ]

    @admin.display(description="Questions")
    def question_analytics(self, lesson: Lesson) -> str:
        if not lesson.pk:
            return "Shown once learners answer the lesson."
        rows = analytics.lesson_question_rows(lesson)
        if not any(row.learners for row in rows):
            return "No learner has answered these questions yet."
        return figures_table(
            [
                "Question",
                "Right first time",
                "Choices chosen first",
                "Median time",
                "Discrimination",
                "What to look at",
            ],
            (
                (
                    row.question.position,
                    percent_of(row.right, row.learners),
                    format_html(
                        '<ul class="shares">{}</ul>',
                        format_html_join(
                            "",
                            "<li>{}{}: {}</li>",
                            (
                                (c.letter, " (right)" if c.correct else "", f"{c.share:.0%}")
                                for c in row.choices
                            ),
                        ),
                    ),
                    "-" if row.median_seconds is None else f"{row.median_seconds:.0f} s",
                    "-" if row.discrimination is None else f"{row.discrimination:+.2f}",
                    warning_list(("Look at this", flag) for flag in row.flags)
                    if row.flags
                    else (
                        "-"
                        if row.learners >= analytics.FLAG_FROM_LEARNERS
                        else f"Flags from {analytics.FLAG_FROM_LEARNERS} learners"
                    ),
                )
                for row in rows
            ),
        )

    @admin.display(description="Flashcards")
    def flashcard_analytics(self, lesson: Lesson) -> str:
        if not lesson.pk:
            return "-"
        rows = analytics.lesson_flashcard_rows(lesson)
        if not any(row.ratings for row in rows):
            return "No learner has rated these flashcards yet."
        return figures_table(
            ["Flashcard", "Ratings", "“Again” (forgot)", "“Easy”"],
            (
                (
                    row.position,
                    row.ratings,
                    "-" if row.again_share is None else f"{row.again_share:.0%}",
                    "-" if row.easy_share is None else f"{row.easy_share:.0%}",
                )
                for row in rows
            ),
        )


def figures_table(headers: list[str], rows: Iterable[tuple]) -> str:
    """A table of figures: a row per question or flashcard, headed by its number."""
    head = format_html_join("", '<th scope="col">{}</th>', ((header,) for header in headers))
    body = format_html_join(
        "",
        '<tr><th scope="row">{}</th>{}</tr>',
        (
            (first, format_html_join("", "<td>{}</td>", ((cell,) for cell in rest)))
            for first, *rest in rows
        ),
    )
    return format_html(
        '<table class="lesson-analytics"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
        head,
        body,
    )


class QuestionWithAnalyticsAdmin(QuestionAdmin):
    list_display = [*QuestionAdmin.list_display, "attempts", "right_first_time", "lapses"]
    list_display += ["mean_difficulty"]
    readonly_fields = ["how_learners_do", "choice_picks", *QuestionAdmin.readonly_fields]
    fieldsets = [
        ("How learners do", {"fields": ["how_learners_do", "choice_picks"]}),
        *QuestionAdmin.fieldsets,
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Question]:
        return super().get_queryset(request).annotate(**analytics.question_stats())

    @admin.display(description="Attempts", ordering="attempts")
    def attempts(self, question: QuestionWithStats) -> int:
        return question.attempts

    @admin.display(
        description="Right first time", ordering=F("right_first_share").asc(nulls_last=True)
    )
    def right_first_time(self, question: QuestionWithStats) -> str:
        if not question.learners:
            return "-"
        return f"{question.right_first_share:.0%} of {question.learners}"

    @admin.display(description="Forgot after knowing", ordering="lapses")
    def lapses(self, question: QuestionWithStats) -> int:
        return question.lapses

    @admin.display(
        description="Mean difficulty (1-10, from the scheduler's memory model)",
        ordering="mean_difficulty",
    )
    def mean_difficulty(self, question: QuestionWithStats) -> str:
        return "-" if question.mean_difficulty is None else f"{question.mean_difficulty:.1f}"

    @admin.display(description="Summary")
    def how_learners_do(self, question: QuestionWithStats) -> str:
        return format_html(
            "{} attempt{} by {} learner{}; right the first time: {}; forgot after knowing: {}; "
            "mean difficulty (1-10, from the scheduler's memory model): {}.",
            question.attempts,
            pluralize(question.attempts),
            question.learners,
            pluralize(question.learners),
            self.right_first_time(question),
            question.lapses,
            self.mean_difficulty(question),
        )

    @admin.display(description="Choices picked")
    def choice_picks(self, question: QuestionWithStats) -> str:
        rows = format_html_join(
            "",
            "<li>{} {}: picked {} time{}{}</li>",
            (
                (
                    c["letter"],
                    c["text"],
                    c["picks"],
                    pluralize(c["picks"]),
                    " (correct)" if c["correct"] else "",
                )
                for c in analytics.choice_picks(question)
            ),
        )
        return format_html("<ul>{}</ul>", rows)


for model, model_admin in (
    (Lesson, LessonWithAnalyticsAdmin),
    (Question, QuestionWithAnalyticsAdmin),
):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)
