"""Admin forms: a question's choices edited in place, and the publish rule across a lesson."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.forms.models import BaseInlineFormSet

from lessons.models import (
    QUESTIONS_PER_LESSON,
    Lesson,
    ProblemReport,
    Question,
    carry_choice_ids,
)

CHOICE_SLOTS = 6
LETTERS = "ABCDEF"


class TextWithNewlines(forms.CharField):
    """A text box whose line endings are \\n, whatever the browser sends (\\r\\n): saving
    unchanged text changes nothing, and lesson files exported afterwards are byte-stable."""

    def to_python(self, value):
        value = super().to_python(value)
        return value.replace("\r\n", "\n").replace("\r", "\n") if isinstance(value, str) else value


def choice_field_names(slot: int) -> tuple[str, str, str]:
    return f"choice_{slot}_text", f"choice_{slot}_correct", f"choice_{slot}_why"


def _choice_fields() -> dict[str, forms.Field]:
    """Six slots of (text, correct, why wrong), declared so the admin's fieldsets can name them."""
    fields: dict[str, forms.Field] = {}
    for slot, letter in enumerate(LETTERS[:CHOICE_SLOTS]):
        text, correct, why = choice_field_names(slot)
        fields[text] = forms.CharField(
            label=f"Choice {letter}", required=False, widget=forms.TextInput(attrs={"size": 60})
        )
        fields[correct] = forms.BooleanField(label=f"{letter} is correct", required=False)
        fields[why] = forms.CharField(
            label=f"Why {letter} is wrong",
            required=False,
            widget=forms.TextInput(attrs={"size": 60}),
            help_text="Shown to a learner who picks this wrong choice." if slot == 0 else "",
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
        choices = self.instance.choices if self.instance.pk else []
        self.choices_before = list(choices)
        self._correct_before = correct_choice_ids(choices)
        for slot, choice in enumerate(choices[:CHOICE_SLOTS]):
            text, correct, why = choice_field_names(slot)
            self.initial.setdefault(text, choice.get("text", ""))
            self.initial.setdefault(correct, bool(choice.get("correct")))
            self.initial.setdefault(why, choice.get("explanation", ""))

    def clean(self) -> dict:
        cleaned = super().clean()
        choices = []
        for slot in range(CHOICE_SLOTS):
            text, correct, why = (cleaned.get(name) for name in choice_field_names(slot))
            if not (text or "").strip():
                if correct or (why or "").strip():
                    self.add_error(
                        choice_field_names(slot)[0], "This choice has a flag or reason but no text."
                    )
                continue
            choices.append(
                {"text": text.strip(), "correct": bool(correct), "explanation": (why or "").strip()}
            )
        self.instance.choices = carry_choice_ids(self.instance.choices or [], choices)
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
        exclude = self._get_validation_exclusions()
        if self.prefix:  # in the lesson's formset; a question's own page checks as usual
            exclude |= {"position"}
        try:
            self.instance.validate_constraints(exclude=exclude)
        except ValidationError as error:
            self._update_errors(error)

    @property
    def correct_answer_changed(self) -> bool:
        """True when an existing question's right answer is another one now: other choices
        (by identity) marked right. Moving choices around or rewording one is not a change."""
        return bool(self.instance.pk) and self._correct_before != correct_choice_ids(
            self.instance.choices
        )


def correct_choice_ids(choices: list[dict]) -> set[str | None]:
    return {c.get("id") for c in choices if c.get("correct")}


QuestionAdminForm = type("QuestionAdminForm", (BaseQuestionAdminForm,), _choice_fields())


class LessonAdminForm(forms.ModelForm):
    """The lesson's page; the admin adds the other fields from its fieldsets."""

    class Meta:
        model = Lesson
        fields = ["needs_first"]

    def clean_needs_first(self):
        needed = self.cleaned_data["needs_first"]
        self.instance.validate_needs_first(needed)
        return needed

    def clean_video(self):
        video = self.cleaned_data.get("video")
        limit = settings.LESSON_VIDEO_MAX_BYTES
        # Only a new upload: a video already saved was within the limit of its day.
        if isinstance(video, UploadedFile) and video.size > limit:
            raise ValidationError(
                f"This video is {video.size / 2**20:.0f} MB; a lesson video may be at most "
                f"{limit / 2**20:.0f} MB. Shorten it, or export it smaller: 720p at about "
                "2 Mbit/s is some 15 MB a minute."
            )
        return video


class QuestionInlineFormSet(BaseInlineFormSet):
    """A published lesson needs exactly eight questions, each answerable and explained."""

    def clean(self) -> None:
        super().clean()
        if any(form.errors for form in self.forms):
            return
        kept = [
            form for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")
        ]
        if self.instance.status == Lesson.Status.PUBLISHED:
            problems = publish_problems(
                [(form.cleaned_data.get("position"), form.instance) for form in kept]
            )
            if problems:
                raise ValidationError(
                    ["This lesson cannot be published yet. Save it as a draft, or fix this:"]
                    + problems
                )


def publish_problems(questions: list[tuple[int | None, Question]]) -> list[str]:
    """Which publish rules a lesson's questions break, in words an editor can act on."""
    return [message for _, message in publish_problem_items(questions)]


def publish_problem_items(
    questions: list[tuple[int | None, Question]],
) -> list[tuple[int | None, str]]:
    """The publish rule's problems, each with the position of the question it is about (None
    for the lesson as a whole), so lesson files can point at the line."""
    problems: list[tuple[int | None, str]] = []
    if len(questions) != QUESTIONS_PER_LESSON:
        problems.append(
            (
                None,
                f"A published lesson needs exactly {QUESTIONS_PER_LESSON} questions; "
                f"it has {len(questions)}.",
            )
        )
    for position, question in sorted(questions, key=lambda pair: pair[0] or 0):
        if not any(choice.get("correct") for choice in question.choices):
            problems.append((position, f"Question {position} has no correct choice."))
        if len(question.choices) < 2:
            problems.append((position, f"Question {position} needs at least two choices."))
        if not question.explanation.strip():
            problems.append((position, f"Question {position} has no explanation."))
    return problems


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
        self.fields["question"].choices = [("", "The lesson in general")] + [
            (q.position, f"Question {q.position}: {q.prompt[:70]}") for q in questions
        ]
