"""Admin forms: a question's choices edited in place, and the publish rule across a lesson."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import cast

from django import forms
from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.forms.models import BaseInlineFormSet
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import capfirst, slugify

from lessons.files import lesson_to_markdown
from lessons.models import (
    QUESTIONS_PER_LESSON,
    Flashcard,
    Lesson,
    ProblemReport,
    Question,
    with_choice_ids,
)
from lightmysky.lib.invisible import invisible_characters
from lightmysky.lib.markdown import plain_text, render_inline_markdown

CHOICE_SLOTS = 6
LETTERS = "ABCDEF"


class TextWithNewlines(forms.CharField):
    """A text box whose line endings are \\n, whatever the browser sends (\\r\\n): saving
    unchanged text changes nothing, and lesson files exported afterwards are byte-stable."""

    def to_python(self, value):
        value = super().to_python(value)
        return value.replace("\r\n", "\n").replace("\r", "\n") if isinstance(value, str) else value


# What each text box takes, said under it: editors should not have to guess.
PLAIN_TEXT = "Plain text."
INLINE_MARKDOWN = (
    "Inline Markdown: `code`, **bold**, *italic*. Links, images and HTML are shown as typed."
)
MARKDOWN = (
    "Markdown: **bold**, *italic*, `code`, lists, tables and links. Images and HTML are not shown."
)


class MarkdownTextarea(forms.Textarea):
    """A text box with a live preview of its Markdown beside it (htmx, see lesson-admin.js)."""

    def __init__(self, attrs=None, *, inline: bool = False) -> None:
        super().__init__(attrs)
        self.inline = inline

    def render(self, name, value, attrs=None, renderer=None):
        box = super().render(name, value, attrs, renderer)
        return format_html(
            '<div class="markdown-field">{}<div class="markdown-preview" data-markdown-preview '
            "hidden>"
            '<button type="button" class="button" data-hx-post="{}" data-hx-vals=\'{{"format": '
            '"{}"}}\' data-hx-params="csrfmiddlewaretoken,format" data-hx-trigger="click, '
            'preview-refresh" data-hx-target="next .markdown-preview-output" '
            'data-hx-swap="innerHTML">Preview</button>'
            '<div class="markdown-preview-output" aria-live="polite"></div></div></div>',
            box,
            reverse("admin:lessons_lesson_markdown_preview"),
            "inline" if self.inline else "block",
        )


def with_format(field: forms.Field, note: str, *, markdown: str | None = None) -> None:
    """Say under a field what it takes; give a Markdown text box its preview."""
    field.help_text = f"{note} {field.help_text}".strip()
    if markdown and isinstance(field.widget, forms.Textarea):
        field.widget = MarkdownTextarea(field.widget.attrs, inline=markdown == "inline")


MAX_INVISIBLE_SHOWN = 3


def refuse_invisible_characters(value: str) -> None:
    """A text field's validator: no character that shows nothing or turns the text around
    (lightmysky.lib.invisible), as lesson files refuse them too."""
    found = invisible_characters(str(value))
    if not found:
        return
    several_lines = "\n" in str(value)
    messages = [
        f"On line {c.line}, {c.describe()}" if several_lines else capfirst(c.describe())
        for c in found[:MAX_INVISIBLE_SHOWN]
    ]
    if len(found) > MAX_INVISIBLE_SHOWN:
        messages.append(f"And {len(found) - MAX_INVISIBLE_SHOWN} more invisible characters.")
    raise ValidationError(messages, code="invisible")


def refuse_invisible_characters_in(form: forms.BaseForm) -> None:
    """Every text box of the form refuses invisible characters."""
    for text_field in form.fields.values():
        if isinstance(text_field, forms.CharField) and not text_field.widget.is_hidden:
            text_field.validators.append(refuse_invisible_characters)


def choice_field_names(slot: int) -> tuple[str, str, str]:
    return f"choice_{slot}_text", f"choice_{slot}_correct", f"choice_{slot}_why"


def choice_id_field(slot: int) -> str:
    """The hidden field that carries a choice's identity with its row, so moving a choice (or
    rewording it) keeps what learners' answers to it record."""
    return f"choice_{slot}_id"


def _choice_fields() -> dict[str, forms.Field]:
    """Six slots of (text, correct, why wrong), declared so the admin's fieldsets can name them."""
    fields: dict[str, forms.Field] = {}
    for slot, letter in enumerate(LETTERS[:CHOICE_SLOTS]):
        text, correct, why = choice_field_names(slot)
        fields[text] = forms.CharField(
            label=f"Choice {letter}",
            required=False,
            widget=forms.TextInput(attrs={"size": 60}),
            help_text=INLINE_MARKDOWN if slot == 0 else "",
        )
        fields[correct] = forms.BooleanField(label=f"{letter} is correct", required=False)
        fields[choice_id_field(slot)] = forms.CharField(required=False, widget=forms.HiddenInput)
        fields[why] = forms.CharField(
            label=f"Why {letter} is wrong",
            required=False,
            widget=forms.TextInput(attrs={"size": 60}),
            help_text=f"Shown to a learner who picks this wrong choice. {INLINE_MARKDOWN}"
            if slot == 0
            else "",
        )
    return fields


class BaseQuestionAdminForm(forms.ModelForm):
    """A question with up to six choices as plain fields, so the lesson page edits everything."""

    class Meta:
        model = Question
        fields = ["position", "prompt", "explanation", "keep_choice_order"]
        widgets = {
            "prompt": forms.Textarea(attrs={"rows": 2}),
            "explanation": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        with_format(self.fields["prompt"], INLINE_MARKDOWN, markdown="inline")
        with_format(self.fields["explanation"], "", markdown="block")
        refuse_invisible_characters_in(self)
        if self.prefix:  # on the lesson's page, whose formset fills an empty one in
            self.fields["position"].required = False
            self.fields["position"].help_text = "Left empty, the next free place."
        choices = self.instance.choices if self.instance.pk else []
        self.choices_before = list(choices)
        self._correct_before = correct_choice_ids(choices)
        self.prompt_before = self.instance.prompt if self.instance.pk else ""
        for slot, choice in enumerate(choices[:CHOICE_SLOTS]):
            text, correct, why = choice_field_names(slot)
            self.initial.setdefault(text, choice.get("text", ""))
            self.initial.setdefault(correct, bool(choice.get("correct")))
            self.initial.setdefault(why, choice.get("explanation", ""))
            self.initial.setdefault(choice_id_field(slot), choice.get("id", ""))
        if "replace" in self.fields and not self.instance.pk:
            self.fields["replace"].widget = forms.HiddenInput()  # only a stored one is replaced

    def has_changed(self) -> bool:
        # A new question's position comes filled in, and reordering renumbers it: a blank
        # question that only moved is still blank.
        if not self.instance.pk and self.changed_data == ["position"]:
            return False
        return super().has_changed()

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        if any(
            name in self.errors for slot in range(CHOICE_SLOTS) for name in choice_field_names(slot)
        ):
            return cleaned  # a choice refused as typed: the rest is checked once it is fixed
        stored_ids = {c.get("id") for c in self.choices_before if c.get("id")}
        choices = []
        for slot in range(CHOICE_SLOTS):
            text, correct, why = (cleaned.get(name) for name in choice_field_names(slot))
            if not (text or "").strip():
                if correct or (why or "").strip():
                    self.add_error(
                        choice_field_names(slot)[0], "This choice has a flag or reason but no text."
                    )
                continue
            choice = {
                "text": str(text).strip(),
                "correct": bool(correct),
                # A right choice has no "why wrong": one kept from before would come back if it
                # turned wrong again, and lesson files would write it under a right choice.
                "explanation": "" if correct else (why or "").strip(),
            }
            # The identity the row carries, if it is one of this question's; else a new choice.
            if (choice_id := cleaned.get(choice_id_field(slot))) in stored_ids:
                choice["id"] = choice_id
            choices.append(choice)
        self.instance.choices = with_choice_ids(choices)
        if cleaned.get("explanation") is not None:
            self.instance.explanation = cleaned["explanation"]
        lesson = getattr(self.instance, "lesson", None) if self.instance.lesson_id else None
        if lesson and lesson.status == Lesson.Status.PUBLISHED and not self.prefix:
            # Edited on its own page: the lesson must still pass the publish rule afterwards.
            others = [q for q in lesson.questions.all() if q.pk != self.instance.pk]
            rows = [(q.position, q) for q in [*others, self.instance]]
            if problems := publish_problems(rows):
                raise ValidationError(
                    ["Its lesson is published, and this change would break it:", *problems]
                )
        return cleaned

    def validate_constraints(self) -> None:
        """Leave positions to the lesson's formset, which checks them all together: a swap
        between two questions is valid although each clashes with the other's old position."""
        if not self.prefix:  # a question's own page checks as usual
            super().validate_constraints()
            return
        # As the ModelForm would, leaving out the fields it does not validate, and positions.
        exclude = {f.name for f in Question._meta.fields if f.name not in self.fields}
        exclude |= set(self.errors) | {"position"}
        try:
            self.instance.validate_constraints(exclude=exclude)
        except ValidationError as error:
            self.add_error(None, error)

    @property
    def replacing(self) -> bool:
        """The editor asked for this to be saved as a new question, retiring the old one."""
        return bool(self.instance.pk and self.cleaned_data.get("replace"))

    @property
    def looks_rewritten(self) -> bool:
        """A stored question whose prompt and right answer were both written anew: most likely
        another question typed over this one, which the editor is asked about."""
        if not self.instance.pk or self.replacing:
            return False
        right_before = " / ".join(c["text"] for c in self.choices_before if c.get("correct"))
        right_now = " / ".join(c["text"] for c in self.instance.choices if c.get("correct"))
        return (
            similarity(self.prompt_before, self.instance.prompt) < REWRITTEN_BELOW
            and similarity(right_before, right_now) < REWRITTEN_BELOW
        )

    @property
    def correct_answer_changed(self) -> bool:
        """True when an existing question's right answer is another one now: other choices
        (by identity) marked right. Moving choices around or rewording one is not a change."""
        return bool(self.instance.pk) and self._correct_before != correct_choice_ids(
            self.instance.choices
        )


# How alike two texts are (difflib's ratio, 0 to 1) below which a prompt, and a right answer,
# count as written anew: a reworded prompt keeps most of its words, a new one keeps few.
REWRITTEN_BELOW = 0.5


def similarity(before: str, after: str) -> float:
    return difflib.SequenceMatcher(None, before.lower().split(), after.lower().split()).ratio()


def correct_choice_ids(choices: list[dict]) -> set[str | None]:
    return {c.get("id") for c in choices if c.get("correct")}


class FlashcardAdminForm(forms.ModelForm):
    """A flashcard's two faces side by side, each a short box of inline Markdown."""

    class Meta:
        model = Flashcard
        fields = ["position", "front", "back"]
        widgets = {
            "front": forms.Textarea(attrs={"rows": 2, "cols": 30}),
            "back": forms.Textarea(attrs={"rows": 2, "cols": 30}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in ("front", "back"):
            self.fields[name].label = f"{name.capitalize()} (inline Markdown)"
            with_format(self.fields[name], INLINE_MARKDOWN, markdown="inline")
        refuse_invisible_characters_in(self)
        self.fields["position"].required = False
        self.fields["position"].help_text = "Left empty, after the others."
        # A row of the admin's table, under column headings that name no box: each says its own.
        for name, box in self.fields.items():
            box.widget.attrs.setdefault("aria-label", f"Flashcard {name}")

    def has_changed(self) -> bool:
        # A new card's position comes filled in: a card with only that is still blank.
        if not self.instance.pk and self.changed_data == ["position"]:
            return False
        return super().has_changed()


class MarkdownPreviewForm(forms.Form):
    """What the admin's Markdown preview takes: the text, and whether it is inline."""

    format = forms.ChoiceField(choices=[("block", "Markdown"), ("inline", "Inline Markdown")])
    text = forms.CharField(required=False, strip=False, max_length=100_000)


QuestionAdminForm = type("QuestionAdminForm", (BaseQuestionAdminForm,), _choice_fields())
# On a lesson's page, a stored question can also be replaced by what is written in its block.
LessonQuestionForm = type(
    "LessonQuestionForm",
    (QuestionAdminForm,),
    {
        "replace": forms.BooleanField(
            label="Replace this question",
            required=False,
            help_text="Save what is written here as a new question. The question as it was is "
            "retired: it leaves the lesson, learners' answers to it stay with it, and their "
            "memory of it ends. Leave unticked to reword the question and keep its history.",
        )
    },
)


OPENED_SALT = "lessons.admin.opened"
_REVISION_LINE = re.compile(r'^revision: "([0-9a-f]+)"$', re.MULTILINE)


def opened_token(lesson: Lesson) -> str:
    """The lesson as an editor opened it (its file, compressed and signed), carried in the form
    so a save can tell whether someone else saved in between, and show what they changed."""
    return signing.dumps(lesson_to_markdown(lesson), salt=OPENED_SALT, compress=True)


def revision_in(text: str) -> str:
    found = _REVISION_LINE.search(text)
    return found[1] if found else ""


class OpenedField(forms.CharField):
    """The hidden token of the lesson as opened: bookkeeping, never a change to the lesson."""

    widget = forms.HiddenInput

    def has_changed(self, initial, data) -> bool:
        return False


class LessonAdminForm(forms.ModelForm):
    """The lesson's page; the admin adds the other fields from its fieldsets. A draft needs only
    a title, a subject and an area (the slug follows the title); publishing needs what
    `publish_checklist` lists."""

    opened = OpenedField(required=False)

    class Meta:
        model = Lesson
        fields = ["needs_first"]

    FORMATS = {
        "title": (PLAIN_TEXT, None),
        "summary": (PLAIN_TEXT, None),
        "objectives": (PLAIN_TEXT, None),
        "heading": (PLAIN_TEXT, None),
        "credits": (PLAIN_TEXT, None),
        "body": (MARKDOWN, "block"),
        "example": (MARKDOWN, "block"),
        "tip": (MARKDOWN, "block"),
        "recap": (MARKDOWN, "block"),
        "transcript": (MARKDOWN, "block"),
    }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.conflict: dict | None = None
        for name, (note, markdown) in self.FORMATS.items():
            if name in self.fields:
                help_text = self.fields[name].help_text
                if help_text in ("Markdown.", "The worked example, in Markdown."):
                    self.fields[name].help_text = ""
                with_format(self.fields[name], note, markdown=markdown)
        refuse_invisible_characters_in(self)
        if "slug" in self.fields:
            self.fields["slug"].required = False
            self.fields["slug"].help_text = "Left empty, made from the title."
        if "status" in self.fields:
            self.fields["status"].help_text = (
                "A draft saves with just a title, a subject and an area. Publishing needs "
                "everything in the checklist at the top of this page."
            )
        if self.instance.pk and not self.is_bound:
            self.initial["opened"] = opened_token(self.instance)

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        if "_saveasnew" in self.data:
            cleaned["status"] = Lesson.Status.DRAFT  # a copy starts as a draft, always
        if "slug" in self.fields and not cleaned.get("slug") and cleaned.get("title"):
            cleaned["slug"] = slugify(cleaned["title"])[:200] or "lesson"
        if cleaned.get("status") == Lesson.Status.PUBLISHED:
            lesson = Lesson(**{name: cleaned.get(name) for name, *_ in LESSON_NEEDS})
            lesson.age_to = cleaned.get("age_to")
            for line in publish_checklist(lesson=lesson, questions=[]):
                if line.part not in ("questions", "flashcards") and line.problems:
                    target = line.part if line.part in self.fields else None
                    self.add_error(target, line.problems)
        self._refuse_conflict(cleaned)
        return cleaned

    def _refuse_conflict(self, cleaned: dict) -> None:
        """Another editor saved this lesson after this page was opened: saving now would put
        back what they changed, unless the editor has seen it and chooses to overwrite."""
        if not self.instance.pk or self.data.get("_overwrite") == "yes":
            return
        try:
            opened = signing.loads(cleaned.get("opened") or "", salt=OPENED_SALT)
        except signing.BadSignature:
            return  # a page from before this check, or a form posted by hand: nothing to compare
        now = lesson_to_markdown(self.instance)
        if revision_in(now) == revision_in(opened):
            return
        self.conflict = {"opened": opened, "now": now}
        self.add_error(
            None,
            mark_safe(  # a constant, with its link to the difference shown above the form
                "Someone else saved this lesson after you opened it, and saving yours now "
                'would undo their changes. <a href="#lesson-conflict">See what they changed</a>, '
                "then copy your edits into the lesson as it is now, or save yours over theirs."
            ),
        )

    def clean_needs_first(self):
        needed = self.cleaned_data["needs_first"]
        self.instance.validate_needs_first(needed)
        return needed

    def clean_video(self):
        video = self.cleaned_data.get("video")
        limit = settings.LESSON_VIDEO_MAX_BYTES
        # Only a new upload: a video already saved was within the limit of its day.
        size = video.size if isinstance(video, UploadedFile) else None
        if size is not None and size > limit:
            raise ValidationError(
                f"This video is {size / 2**20:.0f} MB; a lesson video may be at most "
                f"{limit / 2**20:.0f} MB. Shorten it, or export it smaller: 720p at about "
                "2 Mbit/s is some 15 MB a minute."
            )
        return video


def kept_forms(formset) -> list[forms.ModelForm]:
    """The forms of a formset that will be saved: valid, changed or stored, not deleted."""
    return [
        form
        for form in formset.forms
        if form.is_bound
        and form.is_valid()
        and form.cleaned_data
        and not form.cleaned_data.get("DELETE")
    ]


class NumberedInlineFormSet(BaseInlineFormSet):
    """New rows come with their positions filled in: the next ones after the stored rows. The
    rows sent as stored ones must be all the stored ones: a page drawn before another editor
    added or removed one, or a form whose count was changed, would save stored rows as new."""

    def clean(self) -> None:
        super().clean()
        if self.initial_form_count() != len(self.get_queryset()):
            items = self.get_queryset().model._meta.verbose_name_plural
            raise ValidationError(
                f"The lesson's {items} changed since this page was drawn: nothing was saved. "
                "Open the lesson again and make your changes there."
            )

    def get_form_kwargs(self, index: int | None) -> dict:
        kwargs = super().get_form_kwargs(index)
        stored = self.initial_form_count()
        if index is None or index >= stored:
            last = max((row.position or 0 for row in self.get_queryset()), default=0)
            kwargs["initial"] = {"position": last + (index - stored if index else 0) + 1}
        return kwargs


class QuestionInlineFormSet(NumberedInlineFormSet):
    """A published lesson needs exactly eight questions, each answerable and explained. New
    questions come with the next free positions filled in; a position left empty is filled."""

    def clean(self) -> None:
        super().clean()
        if any(form.errors for form in self.forms):
            return
        kept = kept_forms(self)
        positions = [
            form.cleaned_data["position"] for form in kept if form.cleaned_data["position"]
        ]
        if len(positions) != len(set(positions)):
            # The database's rule holds for the lesson's questions, not the retired ones, so
            # Django's own formset check (which skips conditional constraints) cannot see it.
            raise ValidationError(self.get_unique_error_message(["position"]))
        taken = set(positions)
        free = (n for n in range(1, QUESTIONS_PER_LESSON + 1) if n not in taken)
        for form in kept:
            if not form.cleaned_data.get("position"):
                position = next(free, None)
                if position is None:
                    raise ValidationError(f"A lesson has at most {QUESTIONS_PER_LESSON} questions.")
                form.cleaned_data["position"] = form.instance.position = position
        if self.instance.status == Lesson.Status.PUBLISHED:
            problems = publish_problems(
                [(form.cleaned_data.get("position"), form.instance) for form in kept]
            )
            if problems:
                raise ValidationError(
                    ["This lesson cannot be published yet. Save it as a draft, or fix this:"]
                    + problems
                )


class FlashcardInlineFormSet(NumberedInlineFormSet):
    """A published lesson needs at least four flashcards. Each has its own position: new cards
    left empty, or given one another card holds, take the next ones in the order written."""

    def add_fields(self, form, index) -> None:
        super().add_fields(form, index)
        if "DELETE" in form.fields:
            form.fields["DELETE"].widget.attrs["aria-label"] = "Delete this flashcard"

    def clean(self) -> None:
        super().clean()
        if any(form.errors for form in self.forms):
            return
        kept = kept_forms(self)
        held: set[int] = set()
        for form in kept:
            position = form.cleaned_data.get("position")
            if form.instance.pk and position:
                if position in held:
                    raise ValidationError(
                        f"Two flashcards are at position {position}. Give each its own place."
                    )
                held.add(position)
        for form in kept:
            position = form.cleaned_data.get("position")
            if not position or (not form.instance.pk and position in held):
                position = max(held, default=0) + 1
                form.cleaned_data["position"] = form.instance.position = position
            if position > Flashcard.MAX_POSITION:
                raise ValidationError(
                    f"A flashcard's position may be at most {Flashcard.MAX_POSITION}: number "
                    "them from 1."
                )
            held.add(position)
        if self.instance.status == Lesson.Status.PUBLISHED:
            line = flashcards_line(len(kept))
            if line.problems:
                raise ValidationError(line.problems)


MIN_FLASHCARDS = 4
# What a published lesson's own texts need: (field, label on the checklist, what is missing).
LESSON_NEEDS = [
    ("summary", "Summary", "The lesson has no summary."),
    ("age_from", "Ages", "The lesson does not say which ages it is for (from and to)."),
    ("objectives", "Objectives", "The lesson has no objectives."),
    ("heading", "Lesson heading", "The lesson has no heading."),
    ("body", "Body", "The lesson has no body: the text that teaches the idea."),
    ("example", "Try it together", "The lesson has no worked example (“Try it together”)."),
    ("recap", "Recap", "The lesson has no recap."),
]


@dataclass
class ChecklistLine:
    """One thing publishing needs, where it is on the lesson's admin page, and what is missing
    (nothing when it is done)."""

    label: str
    anchor: str
    problems: list[str] = field(default_factory=list)
    part: str = ""  # the lesson field, "questions" or "flashcards": lesson files name its line
    position: int | None = None  # the question's, for a question's line

    @property
    def done(self) -> bool:
        return not self.problems


def publish_checklist(
    *,
    lesson: Lesson | None = None,
    questions: list[tuple[int | None, Question, str]],
    flashcards: int | None = None,
) -> list[ChecklistLine]:
    """The publish rule as a checklist: the lesson's own texts (with `lesson`), eight complete
    questions (each given as position, question and its anchor on the page), and at least four
    flashcards (with their count). A lesson can be published when every line is done."""
    lines: list[ChecklistLine] = []
    if lesson is not None:
        for name, label, missing in LESSON_NEEDS:
            value = getattr(lesson, name)
            if name == "age_from":
                empty = lesson.age_from is None or lesson.age_to is None
            else:
                empty = not (value or "").strip()
            lines.append(ChecklistLine(label, f"id_{name}", [missing] if empty else [], name))
    count = len(questions)
    lines.append(
        ChecklistLine(
            f"{QUESTIONS_PER_LESSON} questions",
            "questions-group",
            []
            if count == QUESTIONS_PER_LESSON
            else [
                f"A published lesson needs exactly {QUESTIONS_PER_LESSON} questions; "
                f"it has {count}."
            ],
            "questions",
        )
    )
    for position, question, anchor in sorted(questions, key=lambda row: row[0] or 0):
        lines.append(
            ChecklistLine(
                f"Question {position}",
                anchor,
                question_problems(position, question),
                "questions",
                position,
            )
        )
    if flashcards is not None:
        lines.append(flashcards_line(flashcards))
    return lines


def question_problems(position: int | None, question: Question) -> list[str]:
    """What one question lacks before its lesson can be published."""
    problems = []
    choices = question.choices if isinstance(question.choices, list) else []
    if not any(choice.get("correct") for choice in choices):
        problems.append(f"Question {position} has no correct choice.")
    if len(choices) < 2:
        problems.append(f"Question {position} needs at least two choices.")
    if not (question.explanation or "").strip():
        problems.append(f"Question {position} has no explanation.")
    unexplained = [
        LETTERS[index]
        for index, choice in enumerate(choices[: len(LETTERS)])
        if not choice.get("correct") and not str(choice.get("explanation") or "").strip()
    ]
    if unexplained:
        which = " and ".join(filter(None, [", ".join(unexplained[:-1]), unexplained[-1]]))
        plural = "s" if len(unexplained) > 1 else ""
        problems.append(f"Question {position} has no “why wrong” for choice{plural} {which}.")
    return problems


def flashcards_line(count: int) -> ChecklistLine:
    problems = (
        []
        if count >= MIN_FLASHCARDS
        else [f"A published lesson needs at least {MIN_FLASHCARDS} flashcards; it has {count}."]
    )
    return ChecklistLine(
        f"At least {MIN_FLASHCARDS} flashcards", "flashcards-group", problems, "flashcards"
    )


def publish_problems(questions: list[tuple[int | None, Question]]) -> list[str]:
    """Which publish rules a lesson's questions break, in words an editor can act on."""
    return [message for _, message in publish_problem_items(questions)]


def publish_problem_items(
    questions: list[tuple[int | None, Question]],
) -> list[tuple[int | None, str]]:
    """The publish rule's problems with the questions, each with the position of the question
    it is about (None for the lesson as a whole), so lesson files can point at the line."""
    lines = publish_checklist(questions=[(position, q, "") for position, q in questions])
    return [(line.position, problem) for line in lines for problem in line.problems]


class ReportForm(forms.Form):
    kind = forms.ChoiceField(
        label="What kind of problem?",
        choices=ProblemReport.Kind.choices,
        widget=forms.RadioSelect,
        error_messages={"required": "Choose what kind of problem it is."},
    )
    question = forms.TypedChoiceField(
        label="Where is it?",
        coerce=int,
        required=False,
        empty_value=None,
        error_messages={"invalid_choice": "That question is not part of this lesson."},
    )
    message = forms.CharField(
        label="What is wrong?",
        min_length=5,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="A sentence or two is plenty. Please do not include personal details.",
        error_messages={
            "required": "Tell us what is wrong, in a few words.",
            "min_length": "Tell us a little more: at least %(limit_value)d characters.",
            "max_length": "Please keep it under %(limit_value)d characters.",
        },
    )

    def __init__(self, *args, questions: list[Question], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["question"]).choices = [
            ("", "The lesson in general")
        ] + [(q.position, f"Question {q.position}: {_as_read(q.prompt)[:70]}") for q in questions]


def _as_read(prompt: str) -> str:
    """A prompt as it reads on the page, without its Markdown marks (for a drop-down's text)."""
    return plain_text(render_inline_markdown(prompt))
