from __future__ import annotations

from collections.abc import Iterable

from django.contrib import admin, messages
from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from lessons import services
from lessons.forms import (
    CHOICE_SLOTS,
    LessonAdminForm,
    QuestionAdminForm,
    QuestionInlineFormSet,
    choice_field_names,
)
from lessons.item_checks import lesson_item_warnings, question_warnings
from lessons.models import Area, Flashcard, Lesson, ProblemReport, Question, Subject
from practice import selectors as practice_selectors
from practice import services as practice_services

ITEM_CHECKS_NOTE = (
    "Cues that let a learner answer without knowing, found in the saved questions. They are "
    "advice: they never stop a lesson being published."
)
ANSWER_CHANGE_WARNING = (
    "Changing which choices are correct on a published question resets every learner's memory "
    "of it when you save: their stars for it go unlit, and their past answers are kept."
)


class AreaInline(admin.TabularInline):
    model = Area
    extra = 0
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "position"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name"]
    inlines = [AreaInline]


@admin.register(Area)
class AreaAdmin(admin.ModelAdmin):
    list_display = ["name", "subject", "position"]
    list_filter = ["subject"]
    search_fields = ["name"]


def choice_fieldsets() -> list[str | tuple[str, ...]]:
    return [tuple(choice_field_names(slot)) for slot in range(CHOICE_SLOTS)]


class QuestionInline(admin.StackedInline):
    model = Question
    form = QuestionAdminForm
    formset = QuestionInlineFormSet
    extra = 0
    max_num = 8
    show_change_link = True  # the question's own page shows how learners do on it
    fieldsets = [
        (None, {"fields": ["position", "prompt"], "description": ANSWER_CHANGE_WARNING}),
        (
            "Choices: tick the right ones, say why each wrong one is wrong",
            {
                "fields": [*choice_fieldsets(), "keep_choice_order"],
            },
        ),
        (None, {"fields": ["explanation"]}),
    ]

    def get_extra(self, request: HttpRequest, obj: Lesson | None = None, **kwargs) -> int:
        return 8 if obj is None else 0


class FlashcardInline(admin.TabularInline):
    model = Flashcard
    extra = 0
    fields = ["position", "front", "back"]

    def get_extra(self, request: HttpRequest, obj: Lesson | None = None, **kwargs) -> int:
        return 4 if obj is None else 0


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    form = LessonAdminForm
    list_display = ["title", "public_id", "subject", "area", "status", "updated_at", "site_link"]
    list_filter = ["status", "subject", "area", "updated_at"]
    list_select_related = ["subject", "area"]
    search_fields = ["title", "summary", "public_id"]
    prepopulated_fields = {"slug": ["title"]}
    autocomplete_fields = ["needs_first", "connections"]
    readonly_fields = ["public_id", "updated_at", "open_reports", "item_checks"]
    inlines = [QuestionInline, FlashcardInline]
    save_on_top = True
    fieldsets = [
        (None, {"fields": ["title", "slug", "public_id", "status", "summary"]}),
        (
            "Where it sits",
            {
                "fields": ["subject", "area", ("age_from", "age_to"), "needs_first", "connections"],
            },
        ),
        (
            "The lesson",
            {
                "fields": ["objectives", "heading", "body", "example", "tip", "recap", "credits"],
                "description": "Markdown: **bold**, *italic*, lists and tables. "
                "It is rendered and cleaned when you save.",
            },
        ),
        ("Video (optional)", {"fields": ["video", "transcript"], "classes": ["collapse"]}),
        ("Item-writing checks", {"fields": ["item_checks"], "description": ITEM_CHECKS_NOTE}),
        ("Reports and history", {"fields": ["open_reports", "updated_at"]}),
    ]

    @admin.display(description="Warnings")
    def item_checks(self, lesson: Lesson) -> str:
        if not lesson.pk:
            return "Shown once the lesson is saved."
        warnings = lesson_item_warnings(lesson.questions.all())
        if not warnings:
            return "No warnings."
        return warning_list(
            (f"Question {position}" if position else "The lesson", warning)
            for position, warning in warnings
        )

    @admin.display(description="Open problem reports")
    def open_reports(self, lesson: Lesson) -> str:
        if not lesson.pk:
            return "-"
        count = lesson.reports.filter(status__in=["new", "accepted"]).count()
        url = reverse("admin:lessons_problemreport_changelist") + f"?lesson__id__exact={lesson.pk}"
        return format_html('<a href="{}">{} open</a>', url, count)

    @admin.display(description="On the site")
    def site_link(self, lesson: Lesson) -> str:
        label = "Preview" if lesson.status == Lesson.Status.DRAFT else "View"
        return format_html('<a href="{}">{}</a>', lesson.get_absolute_url(), label)

    def save_formset(self, request, form, formset, change) -> None:
        changed = []
        if formset.model is Question:
            changed = [
                f.instance
                for f in formset.forms
                if f.has_changed() and getattr(f, "correct_answer_changed", False)
            ]
            # Questions that change places step aside first, so a swap never meets the
            # (lesson, position) unique constraint halfway.
            moving = [
                f.instance.pk
                for f in formset.forms
                if f.instance.pk and "position" in f.changed_data
            ]
            Question.objects.filter(pk__in=moving).update(position=F("position") + 100)
        super().save_formset(request, form, formset, change)
        reset_memories(self, request, changed)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    """Every question with how learners do on it, sortable, so the ones they miss stand out."""

    form = QuestionAdminForm
    list_display = [
        "__str__",
        "lesson",
        "attempts",
        "right_first_time",
        "lapses",
        "mean_difficulty",
    ]
    list_filter = ["lesson__subject", "lesson__status", "lesson"]
    list_select_related = ["lesson"]
    search_fields = ["prompt", "lesson__title"]
    readonly_fields = ["how_learners_do", "choice_picks", "item_checks"]
    fieldsets = [
        ("How learners do", {"fields": ["how_learners_do", "choice_picks"]}),
        (None, {"fields": ["position", "prompt"], "description": ANSWER_CHANGE_WARNING}),
        ("Choices", {"fields": [*choice_fieldsets(), "keep_choice_order"]}),
        (None, {"fields": ["explanation"]}),
        ("Item-writing checks", {"fields": ["item_checks"], "description": ITEM_CHECKS_NOTE}),
    ]

    @admin.display(description="Warnings")
    def item_checks(self, question: Question) -> str:
        warnings = question_warnings(
            question.prompt, question.choices, keep_choice_order=question.keep_choice_order
        )
        if not warnings:
            return "No warnings."
        return warning_list((f"Question {question.position}", w) for w in warnings)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Question]:
        return super().get_queryset(request).annotate(**practice_selectors.question_stats())

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # questions are written on their lesson's page

    def has_delete_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        # A published lesson keeps its eight questions; delete on the lesson's page, as a draft.
        if obj is not None and obj.lesson.status == Lesson.Status.PUBLISHED:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(description="Attempts", ordering="attempts")
    def attempts(self, question: Question) -> int:
        return question.attempts

    @admin.display(
        description="Right first time", ordering=F("right_first_share").asc(nulls_last=True)
    )
    def right_first_time(self, question: Question) -> str:
        if not question.learners:
            return "-"
        return f"{question.right_first_share:.0%} of {question.learners}"

    @admin.display(description="Lapses", ordering="lapses")
    def lapses(self, question: Question) -> int:
        return question.lapses

    @admin.display(description="Mean difficulty (1-10)", ordering="mean_difficulty")
    def mean_difficulty(self, question: Question) -> str:
        return "-" if question.mean_difficulty is None else f"{question.mean_difficulty:.1f}"

    @admin.display(description="Summary")
    def how_learners_do(self, question: Question) -> str:
        return format_html(
            "{} attempts by {} learners; right the first time: {}; lapses: {}; "
            "mean FSRS difficulty: {}.",
            question.attempts,
            question.learners,
            self.right_first_time(question),
            question.lapses,
            self.mean_difficulty(question),
        )

    @admin.display(description="Choices picked")
    def choice_picks(self, question: Question) -> str:
        rows = format_html_join(
            "",
            "<li>{} {}: picked {} time(s){}</li>",
            (
                (c["letter"], c["text"], c["picks"], " (correct)" if c["correct"] else "")
                for c in practice_selectors.choice_picks(question)
            ),
        )
        return format_html("<ul>{}</ul>", rows)

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        reset_memories(self, request, [obj] if form.correct_answer_changed else [])


def warning_list(rows: Iterable[tuple[str, str]]) -> str:
    return format_html(
        '<ul class="item-checks">{}</ul>',
        format_html_join("", "<li><strong>{}:</strong> {}</li>", rows),
    )


def reset_memories(model_admin, request: HttpRequest, questions: list[Question]) -> None:
    """Forget learners' memory of questions whose right answer changed, and say so."""
    if not questions:
        return
    reset = sum(practice_services.question_memories_reset(question=q) for q in questions)
    numbers = ", ".join(str(q.position) for q in questions)
    model_admin.message_user(
        request,
        f"The right answer changed on question {numbers}: {reset} learner memory "
        f"state{'s' if reset != 1 else ''} were reset; their answers are kept.",
        messages.WARNING,
    )


def move_reports(status: str, label: str):
    @admin.action(description=f"Mark selected reports as {label}")
    def action(modeladmin, request, queryset) -> None:
        moved, skipped = services.reports_move(reports=queryset, status=status)
        modeladmin.message_user(request, f"{moved} report(s) marked {label}.")
        if skipped:
            modeladmin.message_user(
                request,
                f"{skipped} report(s) left as they were: reports move new → accepted → "
                "fixed or dismissed.",
                messages.WARNING,
            )

    action.__name__ = f"mark_{status}"
    return action


@admin.register(ProblemReport)
class ProblemReportAdmin(admin.ModelAdmin):
    list_display = ["created_at", "status", "kind", "lesson_link", "question", "short_message"]
    list_filter = ["status", "kind", "created_at", "lesson__subject", "lesson"]
    list_select_related = ["lesson", "question"]
    search_fields = ["message", "lesson__title"]
    readonly_fields = ["lesson_link", "question", "kind", "message", "created_at", "updated_at"]
    fields = ["status", "lesson_link", "question", "kind", "message", "created_at", "updated_at"]
    actions = [
        move_reports(ProblemReport.Status.ACCEPTED, "accepted"),
        move_reports(ProblemReport.Status.FIXED, "fixed"),
        move_reports(ProblemReport.Status.DISMISSED, "dismissed"),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # reports come from learners

    @admin.display(description="Lesson", ordering="lesson__title")
    def lesson_link(self, report: ProblemReport) -> str:
        url = reverse("admin:lessons_lesson_change", args=[report.lesson_id])
        return format_html('<a href="{}">{}</a>', url, report.lesson.title)

    @admin.display(description="Message")
    def short_message(self, report: ProblemReport) -> str:
        return report.message[:90] + ("…" if len(report.message) > 90 else "")

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if obj is not None:
            allowed = {obj.status} | ProblemReport.MOVES[ProblemReport.Status(obj.status)]
            form.base_fields["status"].choices = [
                (value, label) for value, label in ProblemReport.Status.choices if value in allowed
            ]
        return form
