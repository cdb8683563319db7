"""The editors' admin: subjects and areas, a whole lesson on one page (its texts, eight
questions and its flashcards, with the checks and their checklist), lesson files uploaded and
downloaded, questions on their own, and problem reports. A change that would lose learners'
answers asks first (AsksBeforeLosingLearnerData). practice/admin.py registers the lesson and
question admins again with the figures from learners' answers, so this module never imports
practice."""

from __future__ import annotations

import dataclasses
import difflib
import io
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import ActionLocation
from django.contrib.admin.actions import delete_selected
from django.contrib.admin.models import LogEntry
from django.contrib.admin.utils import unquote
from django.contrib.admin.widgets import AutocompleteSelect
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import F
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import get_text_list, slugify

from lessons import admin_revisions, learner_data, search, services
from lessons.files import (
    LessonFileError,
    Problem,
    lesson_file_text,
    lesson_to_markdown,
    markdown_to_lesson,
    refuse_large_file,
)
from lessons.forms import (
    CHOICE_SLOTS,
    MIN_FLASHCARDS,
    FlashcardAdminForm,
    FlashcardInlineFormSet,
    LessonAdminForm,
    LessonQuestionForm,
    MarkdownPreviewForm,
    QuestionAdminForm,
    QuestionInlineFormSet,
    TextWithNewlines,
    choice_field_names,
    choice_id_field,
    publish_checklist,
)
from lessons.item_checks import lesson_item_warnings, question_warnings
from lessons.models import (
    QUESTIONS_PER_LESSON,
    Area,
    Flashcard,
    Lesson,
    LessonRevision,
    ProblemReport,
    Question,
    Subject,
    new_item_key,
    with_choice_ids,
)
from lightmysky.admin import RefusesMalformedInput
from lightmysky.lib.markdown import markdown_losses, render_inline_markdown, render_markdown
from lightmysky.lib.numbers import small_int

ITEM_CHECKS_NOTE = (
    "Cues that let a learner answer without knowing, found in the saved questions. They are "
    "advice: they never stop a lesson being published."
)
ANSWER_CHANGE_NOTE = (
    "If learners remember this question and you change which choices are right, saving asks "
    "whether to reset their memory of it. Rewording or reordering choices is not a change."
)
# Line endings are \n in every text box, so saving unchanged text changes nothing.
TEXT_FIELDS: dict[type[models.Field], dict[str, Any]] = {
    models.TextField: {"form_class": TextWithNewlines}
}
MEMORY_DECISION = "_memory"  # "reset" or "keep", from the confirmation page
REPLACE_CONFIRMED = "_replace"  # "yes": retire the questions being replaced
REWRITTEN = "_rewritten_"  # + a question's pk: "same" (reworded) or "new" (replace it)
CONFIRMATION_FIELDS = {
    MEMORY_DECISION, REPLACE_CONFIRMED, "_unpublish", "_delete_answered", "_confirmed",
}  # fmt: skip


@dataclass
class PendingLosses:
    """What a save would take from learners, for the confirmation page."""

    title: str
    resets: list[dict] = field(default_factory=list)
    unpublish_learners: int = 0
    deleted: list[dict] = field(default_factory=list)
    replaced: list[dict] = field(default_factory=list)
    rewritten: list[dict] = field(default_factory=list)
    unconfirmed: bool = False


class ConfirmationNeeded(Exception):
    """Raised inside the admin's save (its transaction rolls back) to ask the editor first."""

    def __init__(self, pending: PendingLosses) -> None:
        super().__init__(pending.title)
        self.pending = pending


class AsksBeforeLosingLearnerData(RefusesMalformedInput):
    """A change page that shows a confirmation page instead of saving when the save would reset
    learners' memory, take a lesson from them or delete their answers."""

    formfield_overrides = TEXT_FIELDS

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ConfirmationNeeded as asked:
            return confirmation_page(self, request, asked.pending)


def confirmation_page(model_admin, request: HttpRequest, pending: PendingLosses) -> HttpResponse:
    hidden = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in CONFIRMATION_FIELDS
        and name != "csrfmiddlewaretoken"
        and not name.startswith(REWRITTEN)
        for value in values
    ]
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": "Before saving: learners are affected",
        "object_title": pending.title,
        "hidden": hidden,
        "resets": pending.resets,
        "unpublish_learners": pending.unpublish_learners,
        "deleted": pending.deleted,
        "replaced": pending.replaced,
        "rewritten": pending.rewritten,
        "back_url": request.get_full_path(),
        "files_dropped": sorted(request.FILES),
    }
    return TemplateResponse(request, "admin/lessons/confirm_save.html", context)


def right_answer_words(choices: list[dict]) -> str:
    right = [f"“{c['text']}”" for c in choices if c.get("correct")]
    return " and ".join(right) or "none"


def right_answer_after(before: list[dict], after: list[dict]) -> str:
    """The right answer now, each choice by its identity: one that was another choice before
    says what it read then, so a moved or reworded choice is never taken for the old answer."""
    was = {c.get("id"): c["text"] for c in before}
    words = []
    for choice in after:
        if not choice.get("correct"):
            continue
        earlier = was.get(choice.get("id"))
        if earlier is None:
            words.append(f"“{choice['text']}” (a new choice)")
        elif earlier != choice["text"]:
            words.append(f"“{choice['text']}” (the choice that read “{earlier}”)")
        else:
            words.append(f"“{choice['text']}”")
    return " and ".join(words) or "none"


def memory_reset_row(form, position: int | None = None) -> dict | None:
    """The confirmation line of a question form whose right answer changes, if learners
    remember the question; None when nobody would be affected."""
    if not getattr(form, "correct_answer_changed", False) or getattr(form, "replacing", False):
        return None
    learners = learner_data.remembering(form.instance)
    if not learners:
        return None
    return {
        "position": position or form.instance.position,
        "prompt": form.instance.prompt,
        "before": right_answer_words(form.choices_before),
        "after": right_answer_after(form.choices_before, form.instance.choices),
        "learners": learners,
        "question": form.instance,
    }


def history_row(form, answers: dict[int, tuple[int, int]]) -> dict:
    """A stored question being replaced or rewritten, with its learners' answers."""
    count, learners = answers.get(form.instance.pk, (0, 0))
    return {
        "pk": form.instance.pk,
        "position": form.instance.position,
        "before": form.prompt_before,
        "after": form.instance.prompt,
        "right_before": right_answer_words(form.choices_before),
        "right_after": right_answer_words(form.instance.choices),
        "answers": count,
        "learners": learners,
        "remembering": learner_data.remembering(form.instance),
    }


def replaced_forms(request: HttpRequest, formset) -> list:
    """The question forms to save as new questions: "Replace this question" ticked, or a
    rewritten one the editor said is a new question."""
    return [
        form
        for form in formset.forms
        if form.instance.pk
        and form.has_changed()
        and not getattr(form, "cleaned_data", {}).get("DELETE")
        and (form.replacing or request.POST.get(f"{REWRITTEN}{form.instance.pk}") == "new")
    ]


def answered_deletions(formsets) -> list[dict]:
    """The questions and flashcards a save deletes that learners have answered."""
    rows = []
    for formset in formsets:
        if formset.model not in (Question, Flashcard):
            continue
        gone = [f.instance for f in formset.deleted_forms if f.instance.pk]
        if not gone:
            continue
        kind = formset.model._meta.model_name
        counts = learner_data.answers_to(gone)
        for item in gone:
            if item.pk in counts:
                text = item.prompt if kind == "question" else item.front
                answers, learners = counts[item.pk]
                rows.append(
                    {
                        "label": f"{kind.capitalize()} {item.position}",
                        "text": text,
                        "answers": answers,
                        "learners": learners,
                    }
                )
    return rows


class AreaInline(admin.TabularInline):
    model = Area
    extra = 0
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Subject)
class SubjectAdmin(RefusesMalformedInput):
    formfield_overrides = TEXT_FIELDS
    list_display = ["name", "slug", "position"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name"]
    inlines = [AreaInline]


class AreaAdminForm(forms.ModelForm):
    """An area's slug follows its name when left empty (the pop-up on a lesson's page too)."""

    class Meta:
        model = Area
        fields = ["subject", "name", "slug", "position"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["slug"].required = False
        self.fields["slug"].help_text = "Left empty, made from the name."

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        if not cleaned.get("slug") and cleaned.get("name"):
            cleaned["slug"] = slugify(cleaned["name"])[:100] or "area"
        return cleaned


@admin.register(Area)
class AreaAdmin(RefusesMalformedInput):
    # The "+" beside a lesson's Area opens this form with ?subject=<the lesson's subject>
    # (lesson-admin.js), which Django's add form takes as the initial subject.
    form = AreaAdminForm
    list_display = ["name", "subject", "position"]
    list_filter = ["subject"]
    search_fields = ["name"]
    prepopulated_fields = {"slug": ["name"]}


def choice_fieldsets() -> list[str | tuple[str, ...]]:
    return [(*choice_field_names(slot), choice_id_field(slot)) for slot in range(CHOICE_SLOTS)]


# Below this many areas the area filter lists them all; above it, those of the chosen subject.
FEW_AREAS = 30


def area_filter(path: str) -> type[admin.SimpleListFilter]:
    """A filter by area that stays short in a large catalogue: once there are more than a few
    areas it lists only the areas of the subject chosen in the subject filter beside it."""
    subject_parameter = path.removesuffix("area") + "subject__id__exact"

    class AreaFilter(admin.SimpleListFilter):
        title = "area"
        parameter_name = path  # (with a lookup added, the admin would refuse it across a join)

        def lookups(self, request, model_admin):
            areas = Area.objects.select_related("subject").order_by("subject__position", "name")
            subject = small_int(request.GET.get(subject_parameter))
            if subject is not None:
                areas = areas.filter(subject_id=subject)
            elif areas.count() > FEW_AREAS:
                return []
            return [(str(area.pk), str(area)) for area in areas]

        def queryset(self, request, queryset):
            area = small_int(self.value())
            return queryset if area is None else queryset.filter(**{f"{path}_id": area})

    return AreaFilter


def lesson_filter(path: str, source: type[models.Model]) -> type[admin.SimpleListFilter]:
    """A filter by lesson that types its title instead of listing a thousand links: Django's
    own autocomplete box, which searches as the lesson list's search does."""

    class LessonFilter(admin.SimpleListFilter):
        title = "lesson"
        parameter_name = f"{path}__id__exact"
        template = "admin/lessons/lesson_filter.html"

        def lookups(self, request, model_admin):
            return []

        def has_output(self) -> bool:
            return True

        def queryset(self, request, queryset):
            lesson = small_int(self.value())
            return queryset if lesson is None else queryset.filter(**{f"{path}_id": lesson})

        def choices(self, changelist):
            lesson = small_int(self.value())
            others = {
                name: value
                for name, value in changelist.get_filters_params().items()
                if name != self.parameter_name
            }
            if changelist.query:
                others["q"] = [changelist.query]
            yield {
                "parameter": self.parameter_name,
                "chosen": Lesson.objects.filter(pk=lesson).first() if lesson else None,
                "others": [(name, value) for name, values in others.items() for value in values],
                "clear_url": changelist.get_query_string(remove=[self.parameter_name]),
                "source": source._meta,
            }

    return LessonFilter


class FiltersByLesson:
    """The lesson filter's autocomplete box needs Django's own select2 scripts on the list."""

    admin_site: admin.AdminSite

    @property
    def media(self) -> forms.Media:
        box = AutocompleteSelect(Question._meta.get_field("lesson"), self.admin_site)
        own = forms.Media(css={"all": ["css/lesson-filter.css"]}, js=["js/lesson-filter.js"])
        return super().media + box.media + own  # type: ignore[misc]


# The name of Django's "Save as new" button, which here saves the page as a new draft.
SAVE_AS_NEW = "_saveasnew"


def blocks_to_fill(lesson: Lesson | None, needed: int, items: str) -> int:
    """Empty blocks for what a draft still lacks, on the add page and after every save; a
    published lesson has its questions and flashcards, and adds more with "Add another"."""
    if lesson is None:
        return needed
    if lesson.status == Lesson.Status.PUBLISHED:
        return 0
    return max(0, needed - getattr(lesson, items).count())


class QuestionInline(admin.StackedInline):
    model = Question
    form = LessonQuestionForm
    formset = QuestionInlineFormSet
    extra = 0
    max_num = 8
    show_change_link = True  # the question's own page shows how learners do on it
    formfield_overrides = TEXT_FIELDS
    fieldsets = [
        (None, {"fields": ["position", "prompt"]}),
        (
            "Choices: tick the right ones, say why each wrong one is wrong",
            {
                "fields": [*choice_fieldsets(), "keep_choice_order"],
            },
        ),
        (None, {"fields": ["explanation", "replace"]}),
    ]

    def get_extra(self, request: HttpRequest, obj: Lesson | None = None, **kwargs) -> int:
        return blocks_to_fill(obj, QUESTIONS_PER_LESSON, "questions")

    def get_formset(self, request: HttpRequest, obj: Lesson | None = None, **kwargs):
        # Build at most eight forms from a post, whatever count it claims (Django's default
        # bound is a thousand more than max_num, each a question's form: seconds of work).
        return super().get_formset(request, obj, absolute_max=self.max_num, **kwargs)


class FlashcardInline(admin.TabularInline):
    model = Flashcard
    form = FlashcardAdminForm
    formset = FlashcardInlineFormSet
    extra = 0
    fields = ["position", "front", "back"]
    formfield_overrides = TEXT_FIELDS

    def get_extra(self, request: HttpRequest, obj: Lesson | None = None, **kwargs) -> int:
        return blocks_to_fill(obj, MIN_FLASHCARDS, "flashcards")


@admin.register(Lesson)
class LessonAdmin(AsksBeforeLosingLearnerData):
    form = LessonAdminForm
    list_display = ["title", "public_id", "subject", "area", "status", "updated_at", "site_link"]
    list_filter = ["status", "subject", area_filter("area"), "updated_at"]
    list_select_related = ["subject", "area"]
    search_fields = ["title", "summary", "public_id"]
    search_help_text = (
        "Finds a lesson, draft or published, by its title, summary or id (mt_…), and a published "
        "one by any word of its text or questions, as the site's search does."
    )
    prepopulated_fields = {"slug": ["title"]}
    autocomplete_fields = ["needs_first", "connections"]
    readonly_fields = [
        "public_id",
        "updated_at",
        "open_reports",
        "lesson_file",
        "retired_questions",
    ]
    actions = ["download_lesson_files"]
    inlines = [QuestionInline, FlashcardInline]
    save_on_top = True
    save_as = True  # labelled "Save as a new draft" (admin/lessons/lesson/submit_line.html)

    class Media:
        css = {"all": ["css/lesson-admin.css"]}
        js = ["django_htmx/htmx-2.min.js", "js/lesson-admin.js"]

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
                "description": "Each box says what it takes: plain text, or Markdown (rendered "
                "and cleaned when you save; preview it beside the box).",
            },
        ),
        ("Video (optional)", {"fields": ["video", "transcript"], "classes": ["collapse"]}),
        (
            "Reports and history",
            {"fields": ["open_reports", "updated_at", "lesson_file", "retired_questions"]},
        ),
    ]

    def get_fieldsets(self, request, obj=None):
        if obj is not None:
            return self.fieldsets
        # A new lesson's public id is drawn when it is saved: one shown on the add page (drawn
        # anew at each refused save) would not be the lesson's.
        (name, options), *rest = self.fieldsets
        fields = [field for field in options["fields"] if field != "public_id"]
        return [(name, {**options, "fields": fields}), *rest]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        form = context["adminform"].form
        formsets = [inline.formset for inline in context["inline_admin_formsets"]]
        context |= page_checklist(form, formsets)
        context["item_checks_note"] = ITEM_CHECKS_NOTE
        if form.conflict:
            context["conflict"] = conflict_context(obj, form.conflict)
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.display(description="Retired questions")
    def retired_questions(self, lesson: Lesson) -> str:
        """Questions replaced by new ones, each with the answers learners gave it."""
        retired = list(
            Question.everything.filter(lesson=lesson, retired_at__isnull=False).order_by(
                "-retired_at"
            )
        ) if lesson.pk else []  # fmt: skip
        if not retired:
            return "None: every question learners answered is still in the lesson."
        counts = learner_data.answers_to(retired)
        return format_html(
            '<ul class="retired-questions">{}</ul>',
            format_html_join(
                "",
                "<li>Question {} “{}”, retired {}: {} answer(s) from {} learner(s), kept with it "
                "(learners' exports include them)</li>",
                (
                    (
                        q.position, _short(q.prompt), f"{q.retired_at:%Y-%m-%d %H:%M}",
                        *counts.get(q.pk, (0, 0)),
                    )
                    for q in retired
                ),
            ),
        )  # fmt: skip

    @admin.display(description="As a lesson file")
    def lesson_file(self, lesson: Lesson) -> str:
        if not lesson.pk:
            return "-"
        url = reverse("admin:lessons_lesson_file", args=[lesson.pk])
        return format_html(
            '<a href="{}" download>Download {}.md</a> (the format is in docs/lesson-files.md; '
            "import it with <code>manage.py import_lessons</code>)",
            url,
            lesson.public_id,
        )

    def get_urls(self):
        own = [
            path(
                "<int:pk>/lesson-file/",
                self.admin_site.admin_view(self.lesson_file_view),
                name="lessons_lesson_file",
            ),
            path(
                "upload/",
                self.admin_site.admin_view(self.upload_view),
                name="lessons_lesson_upload",
            ),
            path(
                "markdown-preview/",
                self.admin_site.admin_view(self.markdown_preview_view),
                name="lessons_lesson_markdown_preview",
            ),
            *admin_revisions.urls(self),
        ]
        return own + super().get_urls()

    def markdown_preview_view(self, request: HttpRequest) -> HttpResponse:
        """A Markdown field's text as the learner's page will show it, and what it will not show
        (htmx swaps this beside the field)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"], "Send the text to preview with POST.")
        if not (self.has_change_permission(request) or self.has_add_permission(request)):
            raise PermissionDenied
        form = MarkdownPreviewForm(request.POST)  # over 256 KB: lightmysky.views.bad_request
        if not form.is_valid():
            problems = "; ".join(
                f"{name}: {' '.join(map(str, e))}" for name, e in form.errors.items()
            )
            return HttpResponse(
                format_html('<p class="errornote">Cannot preview this: {}</p>', problems),
                status=400,
            )
        inline = form.cleaned_data["format"] == "inline"
        text = form.cleaned_data["text"].replace("\r\n", "\n")
        context = {
            "inline": inline,
            "empty": not text.strip(),
            "html": render_inline_markdown(text) if inline else render_markdown(text),
            "losses": markdown_losses(text, inline=inline),
        }
        return TemplateResponse(request, "admin/lessons/_markdown_preview.html", context)

    def history_view(self, request, object_id, extra_context=None):
        lesson = self.get_object(request, unquote(object_id))
        revisions = admin_revisions.history_rows(lesson) if lesson is not None else []
        return super().history_view(
            request, object_id, {"revisions": revisions} | (extra_context or {})
        )

    def save_model(self, request, obj, form, change) -> None:
        if change:
            services.lesson_revision_before_change(lesson=obj)
        super().save_model(request, obj, form, change)
        if SAVE_AS_NEW in request.POST:
            self.message_user(
                request,
                "This is a new draft, copied from the page you were editing; the lesson you "
                "started from is as it was. Its questions and flashcards have new keys, so no "
                "learner's answers follow them.",
            )

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        """Check an uploaded lesson file, show every problem or what it changes, then apply."""
        if not (self.has_change_permission(request) and self.has_add_permission(request)):
            raise PermissionDenied
        context = {**self.admin_site.each_context(request), "opts": self.model._meta}
        context["title"] = "Upload a lesson file"
        status = 200
        if request.method == "POST":
            name, text, problem = uploaded_text(request)
            context |= {"name": name, "text": text}
            if problem:
                context["problems"] = [problem]
            elif request.POST.get("apply") == "yes":
                answers: dict[str, Any] = {
                    name: value if (value := request.POST.get(name)) in allowed else None
                    for name, allowed in (
                        ("memories", services.MEMORY_DECISIONS),
                        ("missing", services.MISSING_DECISIONS),
                        ("unpublish", services.UNPUBLISH_DECISIONS),
                    )
                }
                try:
                    document = markdown_to_lesson(text, source=name)
                    result = services.lessons_load(
                        lessons=[document], user_id=request.user.pk, **answers
                    )
                except LessonFileError as error:
                    context["problems"] = error.problems
                except services.AnswerNeeded as asked:  # unticked, or learners answered since
                    context |= upload_preview(name, text)
                    given = {k: v for k, v in answers.items() if v is not None}
                    context["answers"] = context.get("answers", {}) | given
                    context["error"] = admin_revisions.unanswered(asked)
                    status = 400
                else:
                    lesson = services.existing_lesson(document)
                    # A line each, under words of its own (the admin capitalises a message's
                    # first letter, which would rename the file).
                    self.message_user(
                        request,
                        format_html(
                            "Uploaded {}: {} created, {} updated.<ul>{}</ul>{}",
                            name,
                            result.created,
                            result.updated,
                            format_html_join(
                                "",
                                "<li>{}: {}</li>",
                                ((step.where, step.past) for step in result.plan),
                            ),
                            format_html(
                                "New items were given keys, which the uploaded file lacks: <a "
                                'href="{}">download the lesson\'s file with them</a> and edit '
                                "that one, or uploading {} again makes them new once more.",
                                reverse("admin:lessons_lesson_file", args=[lesson.pk]),
                                name,
                            )
                            if result.assigned and lesson
                            else "",
                        ),
                    )
                    target = (
                        reverse("admin:lessons_lesson_change", args=[lesson.pk])
                        if lesson
                        else reverse("admin:lessons_lesson_changelist")
                    )
                    return redirect(target)
            else:
                context |= upload_preview(name, text)
        if context.get("problems"):  # the file is refused, shown with why
            status = 400
        return TemplateResponse(
            request, "admin/lessons/upload_lesson_file.html", context, status=status
        )

    def lesson_file_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        lesson = self.get_object(request, str(pk))
        if lesson is None or not self.has_view_permission(request, lesson):
            raise Http404("No such lesson.")
        return lesson_files_response([lesson])

    @admin.action(description="Download the selected lessons as lesson files")
    def download_lesson_files(self, request, queryset) -> HttpResponse:
        return lesson_files_response(list(queryset))

    def save_related(self, request, form, formsets, change) -> None:
        if change:
            pending = self.pending_losses(request, form, formsets)
            if pending.unconfirmed:
                raise ConfirmationNeeded(pending)
        super().save_related(request, form, formsets, change)
        services.lesson_revision_record(
            lesson=form.instance, source=LessonRevision.Source.ADMIN, author_id=request.user.pk
        )
        losses = page_checklist(form, formsets)["losses"]
        if losses:
            self.message_user(
                request,
                format_html(
                    "Saved, but some markup will not show as written: {}",
                    "; ".join(f"{place}: {text}" for _, place, text in losses),
                ),
                messages.WARNING,
            )

    def pending_losses(self, request, form, formsets) -> PendingLosses:
        lesson = form.instance
        pending = PendingLosses(title=lesson.title)
        for formset in formsets:
            if formset.model is Question:
                deleted = {id(f) for f in formset.deleted_forms}
                changed = [f for f in formset.forms if id(f) not in deleted and f.has_changed()]
                answers = learner_data.answers_to([f.instance for f in changed if f.instance.pk])
                replacing = {id(f) for f in replaced_forms(request, formset)}
                for question_form in changed:
                    if id(question_form) in replacing:
                        replaced = history_row(question_form, answers)
                        # Calling a rewritten question new, on a page that said what that
                        # retires, is the confirmation: it is not asked a second time.
                        called_new = request.POST.get(f"{REWRITTEN}{replaced['pk']}") == "new"
                        if (replaced["answers"] or replaced["remembering"]) and not called_new:
                            pending.replaced.append(replaced)
                    elif question_form.looks_rewritten and question_form.instance.pk in answers:
                        rewritten = history_row(question_form, answers)
                        rewritten["decided"] = request.POST.get(f"{REWRITTEN}{rewritten['pk']}")
                        pending.rewritten.append(rewritten)
                        if rewritten["decided"] != "same":
                            pending.unconfirmed = True
                        if rewritten["decided"] != "new" and (
                            reset := memory_reset_row(question_form)
                        ):  # reworded, its right answer may still be another choice
                            pending.resets.append(reset)
                    elif reset := memory_reset_row(question_form):
                        pending.resets.append(reset)
        if pending.resets and request.POST.get(MEMORY_DECISION) not in ("reset", "keep"):
            pending.unconfirmed = True
        if pending.replaced and request.POST.get(REPLACE_CONFIRMED) != "yes":
            pending.unconfirmed = True
        if (
            form.initial.get("status") == Lesson.Status.PUBLISHED
            and lesson.status == Lesson.Status.DRAFT
        ):
            pending.unpublish_learners = learner_data.learners_of(lesson)
            if pending.unpublish_learners and request.POST.get("_unpublish") != "yes":
                pending.unconfirmed = True
        pending.deleted = answered_deletions(formsets)
        if pending.deleted and request.POST.get("_delete_answered") != "yes":
            pending.unconfirmed = True
        return pending

    def delete_view(self, request, object_id, extra_context=None):
        lesson = self.get_object(request, unquote(object_id))
        if lesson is not None and lesson.is_published:
            refuse_published_delete(self, request, [lesson])
            return redirect(reverse("admin:lessons_lesson_change", args=[lesson.pk]))
        return super().delete_view(request, object_id, extra_context)

    def get_actions(self, request, action_location=ActionLocation.CHANGE_LIST):
        actions = super().get_actions(request, action_location)
        return with_delete_action(actions, delete_drafts_only)

    def get_search_results(self, request, queryset, search_term):
        """Titles, summaries and ids as Django searches them (drafts too), and the published
        lessons that the site's own search index finds by their text and questions."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        if indexed := search.matching_lesson_ids(search_term):
            found = found | queryset.filter(pk__in=indexed)
        return found, duplicates

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
        answer_changed = []
        if formset.model is Question:
            deleted = {id(f) for f in formset.deleted_forms}
            for replaced in replaced_forms(request, formset):
                # The old question leaves the lesson with its answers; the form saves anew.
                old = Question.objects.get(pk=replaced.instance.pk)
                services.question_retire(question=old)
                replaced.instance.pk = None
                replaced.instance._state.adding = True
                replaced.instance.key = new_item_key()
                replaced.instance.choices = with_choice_ids(
                    [{k: v for k, v in c.items() if k != "id"} for c in replaced.instance.choices]
                )
                replaced.instance.save()  # (the formset passes over a row without a pk)
                self.message_user(
                    request,
                    f"Question {old.position} was replaced: the question as it was is retired, "
                    "with learners' answers to it.",
                )
            answer_changed = [
                f
                for f in formset.forms
                if id(f) not in deleted
                and f.has_changed()
                and f.instance.pk
                and f.correct_answer_changed
            ]
            # Questions that change places step aside first, so a swap never meets the
            # (lesson, position) unique constraint halfway.
            moving = [
                f.instance.pk
                for f in formset.forms
                if f.instance.pk and "position" in f.changed_data
            ]
            Question.objects.filter(pk__in=moving).update(position=F("position") + 100)
        rows = [row for f in answer_changed if (row := memory_reset_row(f))]
        super().save_formset(request, form, formset, change)
        apply_memory_decision(self, request, rows)


def page_forms(formset) -> list[forms.ModelForm]:
    """The forms of an inline that hold a question or flashcard: the stored ones, and when the
    page was sent, the filled-in new ones (not those marked for deletion)."""
    if not formset.is_bound:
        return [form for form in formset.forms if form.instance.pk]
    found = []
    for form in formset.forms:
        if form.instance.pk is None and not form.has_changed():
            continue
        cleaned = getattr(form, "cleaned_data", None) or {}
        if cleaned.get("DELETE") or (form["DELETE"].value() if "DELETE" in form.fields else False):
            continue
        found.append(form)
    return found


def form_position(form) -> int | None:
    cleaned = getattr(form, "cleaned_data", None) or {}
    if cleaned.get("position"):
        return cleaned["position"]
    try:
        return int(form["position"].value())
    except (TypeError, ValueError):
        return form.instance.position


def page_checklist(form, formsets) -> dict:
    """What the lesson's page shows at its top, as the page stands (saved, or as just sent):
    the publish rule's checklist, the item-writing advice and the markup that will not show,
    each with the place on the page it is about."""
    lesson = form.instance
    questions: list[tuple[int | None, Question, str]] = []
    flashcards = 0
    losses: list[tuple[str, str, str]] = []  # (anchor, place, what)

    def scan(anchor: str, place: str, value, *, inline: bool) -> None:
        for text in markdown_losses(str(value or ""), inline=inline):
            losses.append((anchor, place, text))

    for name, (_, markdown) in LessonAdminForm.FORMATS.items():
        if markdown and name in form.fields:
            scan(f"id_{name}", form.fields[name].label or name, form[name].value(), inline=False)
    for formset in formsets:
        for item in page_forms(formset):
            if formset.model is Question:
                position = form_position(item)
                questions.append((position, item.instance, item.prefix or ""))
                where = f"Question {position}"
                scan(
                    f"id_{item.prefix}-prompt",
                    f"{where}, prompt",
                    item["prompt"].value(),
                    inline=True,
                )
                scan(
                    f"id_{item.prefix}-explanation",
                    f"{where}, explanation",
                    item["explanation"].value(),
                    inline=False,
                )
                for slot in range(CHOICE_SLOTS):
                    for name, label in zip(
                        choice_field_names(slot)[::2], ("choice", "why wrong"), strict=True
                    ):
                        scan(
                            f"id_{item.prefix}-{name}",
                            f"{where}, {label} {'ABCDEF'[slot]}",
                            item[name].value(),
                            inline=True,
                        )
            elif formset.model is Flashcard:
                flashcards += 1
                for name in ("front", "back"):
                    scan(
                        f"id_{item.prefix}-{name}",
                        f"Flashcard {form_position(item)}, {name}",
                        item[name].value(),
                        inline=True,
                    )
    lines = publish_checklist(lesson=lesson, questions=questions, flashcards=flashcards)
    anchors = {position: anchor for position, _, anchor in questions}
    checked = [
        Question(
            position=position,
            prompt=question.prompt or "",
            choices=question.choices if isinstance(question.choices, list) else [],
            keep_choice_order=question.keep_choice_order,
        )
        for position, question, _ in questions
        if position
    ]
    advice = [
        (
            anchors.get(position, "questions-group"),
            f"Question {position}" if position else "The lesson",
            warning,
        )
        for position, warning in lesson_item_warnings(checked)
    ]
    return {
        "checklist": lines,
        "checklist_done": sum(line.done for line in lines),
        "checklist_ready": all(line.done for line in lines),
        "advice": advice,
        "losses": losses,
    }


def conflict_context(lesson: Lesson | None, conflict: dict) -> dict:
    """Who saved the lesson since the editor opened it, and what they changed, as a diff."""
    entry = None
    if lesson is not None:
        entry = (
            LogEntry.objects.filter(
                content_type=ContentType.objects.get_for_model(Lesson), object_id=str(lesson.pk)
            )
            .select_related("user")
            .order_by("-action_time", "-pk")
            .first()
        )
    who = (
        f"{entry.user} saved it on {entry.action_time:%Y-%m-%d at %H:%M} UTC"
        if entry
        else "It was changed"
    )
    diff = "".join(
        difflib.unified_diff(
            conflict["opened"].splitlines(keepends=True),
            conflict["now"].splitlines(keepends=True),
            "when you opened it",
            "now",
        )
    )
    return {"who": who, "diff": diff}


def uploaded_text(request: HttpRequest) -> tuple[str, str, Problem | None]:
    """The uploaded (or carried over) lesson file's name and text, or why it cannot be read
    (too large, or not UTF-8: the same limits as import_lessons)."""
    upload = request.FILES.get("file")
    name = (upload.name if upload else request.POST.get("name")) or "lesson.md"
    name = name[:100]
    try:
        if upload is None:
            return name, lesson_file_text(request.POST.get("text", "").encode(), source=name), None
        refuse_large_file(upload.size or 0, source=name)
        return name, lesson_file_text(upload.read(), source=name), None
    except LessonFileError as error:
        return name, "", error.problems[0]


def upload_preview(name: str, text: str) -> dict:
    """Every problem of an uploaded file, or what importing it would change (nothing written)."""
    try:
        document = markdown_to_lesson(text, source=name)
    except LessonFileError as error:
        return {"problems": error.problems}
    result, problems = services.lessons_check(lessons=[document])
    if problems:
        return {"problems": problems}
    existing = services.existing_lesson(document)
    before = lesson_to_markdown(existing).splitlines(keepends=True) if existing else []
    diff = "".join(
        difflib.unified_diff(
            before, text.replace("\r\n", "\n").splitlines(keepends=True), "now", name
        )
    )
    if result.created:
        summary = "A new lesson."
    elif existing:
        what = "changes" if result.updated else "changes nothing in"
        summary = f"It {what} the lesson “{existing.title}” ({existing.public_id})."
    else:
        summary = "It changes nothing."
    return {
        "preview": {
            "summary": summary,
            "changes": bool(result.created or result.updated),
            "plan": [(line.where, line.future) for line in result.plan],
            "warnings": document["warnings"],
            "diff": diff,
        },
        **admin_revisions.asks_on_page(result),
        "answers": dict(admin_revisions.SAFE_ANSWERS),
    }


def percent_of(part: int, whole: int) -> str:
    return "-" if not whole else f"{part / whole:.0%} of {whole}"


def lesson_files_response(lessons: list[Lesson]) -> HttpResponse:
    """One lesson as its Markdown file; several as a zip of them."""
    if len(lessons) == 1:
        response = HttpResponse(
            lesson_to_markdown(lessons[0]), content_type="text/markdown; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{lessons[0].public_id}.md"'
        return response
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for lesson in lessons:
            archive.writestr(f"{lesson.public_id}.md", lesson_to_markdown(lesson))
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="lessons.zip"'
    return response


def refuse_published_delete(model_admin, request: HttpRequest, lessons: list[Lesson]) -> None:
    titles = get_text_list([f"“{lesson.title}”" for lesson in lessons], "and")
    model_admin.message_user(
        request,
        f"{titles} {'is' if len(lessons) == 1 else 'are'} published, so learners may be "
        "practising it: unpublish first (set its status to Draft and save), then delete it.",
        messages.ERROR,
    )


def delete_drafts_only(modeladmin, request, queryset):
    published = [lesson for lesson in queryset if lesson.is_published]
    if published:
        refuse_published_delete(modeladmin, request, published)
        return None
    return delete_selected(modeladmin, request, queryset)


def with_delete_action(actions: dict, func) -> dict:
    """The admin's actions with Django's "delete selected" done by `func`, which refuses what
    learners may be using and says why (Django's own refusal speaks of permissions)."""
    if (delete := actions.get("delete_selected")) is not None:
        actions["delete_selected"] = dataclasses.replace(delete, func=func)
    return actions


def refuse_published_question_delete(
    model_admin, request: HttpRequest, lessons: list[Lesson], questions: int = 1
) -> None:
    titles = get_text_list([f"“{lesson.title}”" for lesson in lessons], "and")
    one = len(lessons) == 1
    model_admin.message_user(
        request,
        f"{titles} {'is' if one else 'are'} published, and a published lesson keeps its eight "
        f"questions, so {'this question' if questions == 1 else 'these questions'} cannot be "
        f"deleted: unpublish {'the lesson' if one else 'those lessons'} first, or rewrite "
        f"{'the question' if questions == 1 else 'the questions'} instead.",
        messages.ERROR,
    )


def delete_questions_of_drafts_only(modeladmin, request, queryset):
    """Django's "delete selected", refused with the reason when any question is of a published
    lesson (Django's own refusal spoke of the editor's permissions)."""
    published = Lesson.objects.filter(
        status=Lesson.Status.PUBLISHED, pk__in=queryset.values("lesson")
    ).order_by("title")
    if published:
        refuse_published_question_delete(
            modeladmin, request, list(published), questions=queryset.count()
        )
        return None
    return delete_selected(modeladmin, request, queryset)


@admin.register(Question)
class QuestionAdmin(FiltersByLesson, AsksBeforeLosingLearnerData):
    """A question on its own page (written on its lesson's); practice.admin adds how learners
    do on it, sortable in the list, so the ones they miss stand out."""

    form = QuestionAdminForm
    list_display = ["__str__", "lesson"]
    list_filter = [
        "lesson__subject",
        area_filter("lesson__area"),
        "lesson__status",
        lesson_filter("lesson", Question),
    ]
    list_select_related = ["lesson"]
    # "choices" searches the choices' texts and why each wrong one is wrong (stored as JSON).
    search_fields = ["prompt", "choices", "explanation", "lesson__title", "=lesson__public_id"]
    search_help_text = (
        "Finds words in the prompt, the choices, the reasons and the explanation, the lesson's "
        "title, or a lesson's id (mt_…). When the words as typed are in no question, it lists "
        "the questions of the published lessons whose questions use them in another form "
        "(bubbles, bubble), through the site's search index."
    )
    readonly_fields = ["item_checks"]

    def get_search_results(self, request, queryset, search_term):
        found, duplicates = super().get_search_results(request, queryset, search_term)
        # The index is a lesson's: what it adds is every question of a lesson, so only when the
        # words as typed found none (otherwise those few would drown among the lesson's eight).
        if not found.exists() and (
            indexed := search.matching_lesson_ids(search_term, in_questions=True)
        ):
            found = queryset.filter(lesson_id__in=indexed)
        return found, duplicates

    class Media:
        css = {"all": ["css/lesson-admin.css"]}
        js = ["django_htmx/htmx-2.min.js", "js/lesson-admin.js"]

    fieldsets = [
        (None, {"fields": ["position", "prompt"]}),
        (
            "Choices",
            {
                "description": ANSWER_CHANGE_NOTE,
                "fields": [*choice_fieldsets(), "keep_choice_order"],
            },
        ),
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # questions are written on their lesson's page

    def delete_view(self, request, object_id, extra_context=None):
        question = self.get_object(request, unquote(object_id))
        if question is not None and question.lesson.is_published:
            refuse_published_question_delete(self, request, [question.lesson])
            return redirect(reverse("admin:lessons_question_change", args=[question.pk]))
        return super().delete_view(request, object_id, extra_context)

    def get_actions(self, request, action_location=ActionLocation.CHANGE_LIST):
        actions = super().get_actions(request, action_location)
        return with_delete_action(actions, delete_questions_of_drafts_only)

    def has_delete_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        # A published lesson keeps its eight questions; delete on the lesson's page, as a draft.
        if obj is not None and obj.lesson.status == Lesson.Status.PUBLISHED:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request, obj, form, change) -> None:
        row = memory_reset_row(form) if change else None
        if row and request.POST.get(MEMORY_DECISION) not in ("reset", "keep"):
            raise ConfirmationNeeded(PendingLosses(title=str(obj), resets=[row]))
        services.lesson_revision_before_change(lesson=obj.lesson)
        super().save_model(request, obj, form, change)
        apply_memory_decision(self, request, [row] if row else [])
        services.lesson_revision_record(
            lesson=obj.lesson, source=LessonRevision.Source.ADMIN, author_id=request.user.pk
        )

    def delete_model(self, request, obj) -> None:
        self.delete_queryset(request, Question.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset) -> None:
        lessons = list(Lesson.objects.filter(questions__in=queryset).distinct())
        for lesson in lessons:
            services.lesson_revision_before_change(lesson=lesson)
        super().delete_queryset(request, queryset)
        for lesson in lessons:
            services.lesson_revision_record(
                lesson=lesson, source=LessonRevision.Source.ADMIN, author_id=request.user.pk
            )


def _short(text: str, words: int = 14) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def warning_list(rows: Iterable[tuple[str, str]]) -> str:
    return format_html(
        '<ul class="item-checks">{}</ul>',
        format_html_join("", "<li><strong>{}:</strong> {}</li>", rows),
    )


def apply_memory_decision(model_admin, request: HttpRequest, rows: list[dict]) -> None:
    """Reset or keep learners' memory of questions whose right answer changed, as the editor
    chose on the confirmation page, and say which."""
    if not rows:
        return
    numbers = ", ".join(str(row["position"]) for row in rows)
    if request.POST.get(MEMORY_DECISION) != "reset":
        model_admin.message_user(
            request, f"Learners' memory of question {numbers} was kept, as you chose."
        )
        return
    reset = sum(learner_data.forget(row["question"]) for row in rows)
    model_admin.message_user(
        request,
        f"The right answer changed on question {numbers}: "
        f"{services.learners_possessive(reset)} memory of it was reset; their answers are kept.",
        messages.WARNING,
    )


def move_reports(status: str, label: str, description: str = "", name: str = ""):
    @admin.action(description=description or f"Mark selected reports as {label}")
    def action(modeladmin, request, queryset) -> None:
        moved, skipped = services.reports_move(
            reports=queryset, status=status, user_id=request.user.pk
        )
        modeladmin.message_user(request, f"{moved} report{pluralize(moved)} marked {label}.")
        if skipped:
            modeladmin.message_user(
                request,
                f"{skipped} report{pluralize(skipped)} left as "
                f"{pluralize(skipped, 'it was,they were')}: reports move new → accepted → "
                "fixed or dismissed, and a fixed or dismissed one is reopened as accepted.",
                messages.WARNING,
            )

    action.__name__ = name or f"mark_{status}"
    return action


@admin.action(description="Assign selected reports to me")
def assign_to_me(modeladmin, request, queryset) -> None:
    count = services.reports_assign(reports=queryset, user=request.user)
    modeladmin.message_user(request, f"{count} report{pluralize(count)} assigned to you.")


class ReportStateFilter(admin.SimpleListFilter):
    """Open reports (new or accepted) unless another state is chosen: the ones to work on."""

    title = "status"
    parameter_name = "state"
    OPEN, ALL = "open", "all"

    def lookups(self, request, model_admin):
        return [
            (self.OPEN, "Open (new or accepted)"),
            *ProblemReport.Status.choices,
            (self.ALL, "All"),
        ]

    def choices(self, changelist):
        chosen = self.value() or self.OPEN
        for value, label in self.lookup_choices:
            yield {
                "selected": chosen == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": label,
            }

    def queryset(self, request, queryset):
        chosen = self.value() or self.OPEN
        if chosen == self.OPEN:
            return queryset.filter(status__in=ProblemReport.OPEN)
        if chosen == self.ALL:
            return queryset
        return queryset.filter(status=chosen)  # an unknown state shows no report


@admin.register(ProblemReport)
class ProblemReportAdmin(FiltersByLesson, RefusesMalformedInput):
    list_display = [
        "short_message",
        "status",
        "kind",
        "lesson_link",
        "question",
        "assigned_to",
        "created_at",
    ]
    list_display_links = ["short_message"]
    list_filter = [
        ReportStateFilter,
        "kind",
        "assigned_to",
        "created_at",
        "lesson__subject",
        area_filter("lesson__area"),
        lesson_filter("lesson", ProblemReport),
    ]
    list_select_related = ["lesson", "question", "assigned_to"]
    search_fields = ["message", "lesson__title", "=lesson__public_id", "resolution_note"]
    search_help_text = (
        "Finds words in the report, its resolution note, or its lesson's title or id."
    )
    readonly_fields = ["lesson_link", "question", "kind", "message", "created_at", "updated_at"]
    fields = [
        "message",
        "lesson_link",
        "question",
        "kind",
        "status",
        "assigned_to",
        "resolution_note",
        "created_at",
        "updated_at",
    ]
    formfield_overrides = TEXT_FIELDS
    actions = [
        assign_to_me,
        move_reports(ProblemReport.Status.ACCEPTED, "accepted"),
        move_reports(ProblemReport.Status.FIXED, "fixed"),
        move_reports(ProblemReport.Status.DISMISSED, "dismissed"),
        move_reports(
            ProblemReport.Status.ACCEPTED,
            "reopened (accepted)",
            "Reopen selected fixed or dismissed reports",
            "reopen",
        ),
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

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        if obj is not None:
            allowed = {obj.status} | ProblemReport.MOVES[ProblemReport.Status(obj.status)]
            cast(forms.ChoiceField, form.base_fields["status"]).choices = [
                (value, label) for value, label in ProblemReport.Status.choices if value in allowed
            ]
            form.base_fields[
                "status"
            ].help_text = "A fixed or dismissed report is reopened by setting it back to Accepted."
        return form
