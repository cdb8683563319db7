"""The content: subjects, their areas, lessons with their eight questions and their flashcards,
each lesson's kept revisions, learners' problem reports, the content version that keys every
cached page, and the search index's entries."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import secrets
import string
from collections import defaultdict, deque
from collections.abc import Iterable
from typing import NamedTuple, cast

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.core.exceptions import ValidationError
from django.core.validators import (
    FileExtensionValidator,
    MaxValueValidator,
    MinValueValidator,
    RegexValidator,
)
from django.db import models
from django.db.models import Count, Exists, OuterRef, Q
from django.http import HttpRequest
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone

from lightmysky.lib.http import SiteRequest
from lightmysky.lib.markdown import first_sentence, parts_of, render_markdown, with_part_anchors

PUBLIC_ID_ALPHABET = string.ascii_letters + string.digits + "_-"
PUBLIC_ID_PATTERN = r"mt_[A-Za-z0-9_-]{10}"
QUESTIONS_PER_LESSON = 8
WORKSHEET_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def new_public_id() -> str:
    """A random lesson id like the seed's: `mt_` and ten URL-safe characters."""
    return "mt_" + "".join(secrets.choice(PUBLIC_ID_ALPHABET) for _ in range(10))


def new_item_key() -> str:
    """A short random key that names a question or flashcard in exports and logs."""
    return secrets.token_hex(4)


class Subject(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("lessons:subject", args=[self.slug])

    def get_markdown_url(self) -> str:
        return reverse("lessons:subject_markdown", args=[self.slug])


class Area(models.Model):
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="areas")
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["subject", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["subject", "slug"], name="area_slug_unique_in_subject")
        ]

    def __str__(self) -> str:
        return f"{self.subject.name} · {self.name}"


class LessonQuerySet(models.QuerySet["Lesson"]):
    def published(self) -> LessonQuerySet:
        return self.filter(status=Lesson.Status.PUBLISHED)

    def for_page(self) -> LessonQuerySet:
        """Everything the lesson page shows about the lesson itself, in one query."""
        return self.select_related("subject", "area").annotate(
            question_count=Count(
                "questions", filter=Q(questions__retired_at__isnull=True), distinct=True
            )
        )

    def questions_of(self, public_id: str) -> list[Question]:
        """The questions of the lesson with this public id (of those in this queryset) in order,
        each with its lesson and subject, in one query: what an answer to it needs. None: no
        such lesson, or one without questions."""
        return list(
            Question.objects.filter(lesson__in=self, lesson__public_id=public_id)
            .select_related("lesson__subject")
            .order_by("position", "pk")
        )

    def for_listing(self) -> LessonQuerySet:
        # Whole subjects and areas stay together even when editors leave positions equal.
        return self.published().select_related("subject", "area").order_by(
            "subject__position", "subject__name", "subject_id",
            "area__position", "area__name", "area_id", "title",
        )  # fmt: skip

    def neighbours_of(self, lesson: Lesson) -> list[Lesson]:
        """The lesson's published neighbours by title, each with its subject and flagged by
        how it relates (`is_needed_first`, `is_opened_up`, `is_connection`), in one query."""
        needs_first = Lesson.needs_first.through.objects
        links = Lesson.connections.through.objects
        needed_first = needs_first.filter(from_lesson=lesson, to_lesson=OuterRef("pk"))
        opened_up = needs_first.filter(to_lesson=lesson, from_lesson=OuterRef("pk"))
        connection = links.filter(from_lesson=lesson, to_lesson=OuterRef("pk"))
        return list(
            self.published()
            .filter(
                Q(pk__in=needs_first.filter(from_lesson=lesson).values("to_lesson"))
                | Q(pk__in=needs_first.filter(to_lesson=lesson).values("from_lesson"))
                | Q(pk__in=links.filter(from_lesson=lesson).values("to_lesson"))
            )
            .annotate(
                is_needed_first=Exists(needed_first),
                is_opened_up=Exists(opened_up),
                is_connection=Exists(connection),
            )
            .select_related("subject")
            .order_by("title")
        )


@functools.lru_cache(maxsize=8192)
def _lesson_address(
    url_name: str, subject: str, slug: str, public_id: str, urlconf: str, prefix: str
) -> str:
    """A lesson page's address, remembered by everything it is built from (the URLs in force
    and the prefix they are served under among them). A practice page shows three, and
    reversing them took a twentieth of its time."""
    kwargs = {"subject": subject, "slug": slug, "public_id": public_id}
    return reverse(url_name, urlconf=urlconf, kwargs=kwargs)


class Lesson(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PUBLISHED = "published", "Published"

    # Annotated by LessonQuerySet.for_page().
    question_count: int
    # Annotated on a lesson's neighbours by LessonQuerySet.neighbours_of(): how each relates to
    # the lesson (is_needed_first, is_opened_up, is_connection).

    public_id = models.CharField(
        "public id",
        max_length=13,
        unique=True,
        default=new_public_id,
        validators=[
            RegexValidator(f"^{PUBLIC_ID_PATTERN}$", "Ids look like mt_ and 10 characters.")
        ],
    )
    slug = models.SlugField(max_length=200)
    title = models.CharField(max_length=200)
    # A draft saves from its title, subject and area: what else publishing needs is the publish
    # rule's business (lessons.forms.publish_checklist), not the columns'.
    summary = models.TextField(
        blank=True, help_text="Two or three plain sentences shown under the title."
    )
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="lessons")
    area = models.ForeignKey(Area, on_delete=models.PROTECT, related_name="lessons")
    age_from = models.PositiveSmallIntegerField(
        "ages from", null=True, blank=True, validators=[MaxValueValidator(120)]
    )
    age_to = models.PositiveSmallIntegerField(
        "ages to", null=True, blank=True, validators=[MaxValueValidator(120)]
    )
    objectives = models.TextField(
        blank=True, help_text="What a learner can do afterwards: one objective per line."
    )
    heading = models.CharField("lesson heading", max_length=200, blank=True)
    body = models.TextField(blank=True, help_text="Markdown.")
    body_html = models.TextField(editable=False, default="")
    example = models.TextField(
        "Try it together", blank=True, help_text="The worked example, in Markdown."
    )
    example_html = models.TextField(editable=False, default="")
    tip = models.TextField(blank=True, help_text="Markdown.")
    tip_html = models.TextField(editable=False, default="")
    recap = models.TextField(blank=True, help_text="Markdown.")
    recap_html = models.TextField(editable=False, default="")
    video = models.FileField(
        upload_to="videos/",
        blank=True,
        validators=[FileExtensionValidator(["mp4", "webm", "ogv"])],
        help_text="An MP4, WebM or Ogg video file.",
    )
    transcript = models.TextField(blank=True, help_text="Markdown; required with a video.")
    transcript_html = models.TextField(editable=False, default="")
    needs_first = models.ManyToManyField(
        "self", symmetrical=False, related_name="opens_up", blank=True, verbose_name="needs first"
    )
    connections = models.ManyToManyField(
        "self", symmetrical=True, blank=True, verbose_name="optional connections"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    credits = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = LessonQuerySet.as_manager()

    class Meta:
        ordering = ["title"]
        indexes = [
            models.Index(fields=["status", "subject"]),
            # Published lessons in the catalogue's order: "the next lesson to learn" walks it
            # and stops at the first one that fits, instead of sorting the whole catalogue.
            models.Index(fields=["status", "title"], name="lesson_status_title"),
            # The few drafts, for the learner's counter: every memory not in one counts
            # (practice.models.MemoryQuerySet.in_published_lessons). With the status in it,
            # the index alone answers the query, and SQLite then prefers it to scanning the
            # whole (status, subject) index (74 µs a reading for 1,253 lessons, growing with them).
            models.Index(
                fields=["id", "status"],
                condition=~Q(status="published"),
                name="lesson_unpublished",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(age_from__lte=models.F("age_to")), name="lesson_ages_in_order"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        self.render_markdown()
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return self.get_url("lessons:lesson")

    def get_url(self, url_name: str) -> str:
        """This lesson's page named `url_name` (needs the subject loaded): every address of a
        lesson is built from its subject, slug and id."""
        return _lesson_address(
            url_name,
            self.subject.slug,
            self.slug,
            self.public_id,
            get_urlconf() or settings.ROOT_URLCONF,
            get_script_prefix(),
        )

    def get_markdown_url(self) -> str:
        return self.get_url("lessons:lesson_markdown")

    def get_worksheet_url(self) -> str:
        return self.get_url("lessons:worksheet")

    def get_report_url(self) -> str:
        return self.get_url("lessons:report")

    # The practice app's pages of a lesson, by URL name: lessons imports nothing of practice.
    def get_practice_url(self) -> str:
        return self.get_url("practice:round")

    def get_flashcards_url(self) -> str:
        return self.get_url("practice:flashcards")

    def get_worksheet_answers_url(self) -> str:
        return self.get_url("practice:worksheet_answers")

    def clean(self) -> None:
        errors = {}
        if self.age_from is not None and self.age_to is not None and self.age_from > self.age_to:
            errors["age_to"] = "The upper age must not be below the lower one."
        if self.subject_id and self.area_id and self.area.subject_id != self.subject_id:
            errors["area"] = f"This area belongs to another subject than {self.subject}."
        if self.video and not self.transcript.strip():
            errors["transcript"] = "A lesson with a video needs its transcript."
        if errors:
            raise ValidationError(errors)

    def validate_needs_first(self, needed: Iterable[Lesson]) -> None:
        """Refuse prerequisites that would lead back to this lesson: a learner could never start."""
        chain = self.needs_first_circle(needed)
        if len(chain) == 2:
            raise ValidationError(f"“{self.title}” cannot need itself first.", code="circle")
        if chain:
            circle = " → ".join(f"“{lesson.title}” ({lesson.public_id})" for lesson in chain)
            raise ValidationError(
                f"Lessons cannot need each other first in a circle: {circle}, where each needs "
                "the next first. Remove one of these links.",
                code="circle",
            )

    def needs_first_circle(self, needed: Iterable[Lesson]) -> list[Lesson]:
        """The lessons from this one back to itself if it needed `needed` first, each needing
        the next ([self, …, self]); empty when the links make no circle."""
        needed = list(needed)
        if self.pk is None or not needed:
            return []  # nothing can need a lesson that is not saved yet
        following: dict[int, list[int]] = defaultdict(list)
        links = Lesson.needs_first.through.objects.exclude(from_lesson_id=self.pk)
        for from_id, to_id in links.values_list("from_lesson_id", "to_lesson_id"):
            following[from_id].append(to_id)
        following[self.pk] = [lesson.pk for lesson in needed]
        came_from: dict[int, int] = {}
        queue = deque([self.pk])
        while queue:
            current = queue.popleft()
            for other in following[current]:
                if other == self.pk:
                    path = [current]
                    while path[-1] != self.pk:
                        path.append(came_from[path[-1]])
                    ids = [*reversed(path), self.pk]
                    lessons = Lesson.objects.in_bulk(ids)
                    return [lessons[pk] for pk in ids]
                if other not in came_from:
                    came_from[other] = current
                    queue.append(other)
        return []

    def render_markdown(self) -> None:
        self.body_html = with_part_anchors(render_markdown(self.body))
        self.example_html = render_markdown(self.example)
        self.tip_html = render_markdown(self.tip)
        self.recap_html = render_markdown(self.recap)
        self.transcript_html = render_markdown(self.transcript)

    @property
    def read_parts(self) -> list[tuple[str, str]]:
        """The Read's parts, for its outline: (anchor, heading as HTML)."""
        return parts_of(self.body_html)

    @property
    def is_published(self) -> bool:
        return self.status == self.Status.PUBLISHED

    def worksheet_code(self, questions: list[Question]) -> str:
        """A short code printed on the worksheet: it changes whenever its questions change, so
        answers typed in from an old print-out are not graded against new questions."""
        content = json.dumps(
            [self.public_id] + [[q.position, q.key, q.prompt, q.choices] for q in questions],
            sort_keys=True,
        )
        digest = hashlib.sha256(content.encode()).digest()
        return "".join(
            WORKSHEET_CODE_ALPHABET[b % len(WORKSHEET_CODE_ALPHABET)] for b in digest[:6]
        )

    @property
    def objective_list(self) -> list[str]:
        return [line.strip(" -*\t") for line in self.objectives.splitlines() if line.strip(" -*\t")]

    @property
    def ages(self) -> str:
        if self.age_from is None or self.age_to is None:
            return "ages not set yet"  # only a draft, seen by its editors
        return f"ages {self.age_from} to {self.age_to}"


class QuestionManager(models.Manager["Question"]):
    """A lesson's questions: retired ones keep their learners' answers but are no longer part of
    it (a foreign key from an answer still reaches one, through the base manager)."""

    def get_queryset(self) -> models.QuerySet[Question]:
        return super().get_queryset().filter(retired_at__isnull=True)


class Question(models.Model):
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="questions")
    key = models.CharField(max_length=16, default=new_item_key, editable=False)
    position = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(QUESTIONS_PER_LESSON)]
    )
    prompt = models.TextField()
    choices = models.JSONField(
        default=list,
        help_text='A list of {"id", "text", "correct", "explanation"}: the id is what learners\' '
        "answers record, the explanation says why a wrong choice is wrong.",
    )
    explanation = models.TextField(
        blank=True, help_text="Why the right answer is right, in Markdown."
    )
    explanation_html = models.TextField(editable=False, default="")
    keep_choice_order = models.BooleanField(
        default=False,
        db_default=False,
        help_text="For numeric or ordered choices: the choices are shown in the written order "
        "instead of shuffled.",
    )
    # Set when a new question replaced this one: it leaves the lesson (its position is free for
    # the new one), learners' memories of it end, and their answers stay with it.
    retired_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = QuestionManager()
    everything: models.Manager[Question] = models.Manager()  # retired questions too

    class Meta:
        ordering = ["lesson", "position"]
        base_manager_name = "everything"
        constraints = [
            models.UniqueConstraint(
                fields=["lesson", "position"],
                condition=Q(retired_at__isnull=True),
                name="question_position_unique_in_lesson",
            ),
            models.UniqueConstraint(fields=["lesson", "key"], name="question_key_unique_in_lesson"),
            # Only a floor in the database: reordering moves questions through positions above 8
            # for a moment (see LessonAdmin.save_formset); the field's validators keep 1 to 8.
            models.CheckConstraint(condition=Q(position__gte=1), name="question_position_from_1"),
        ]

    def __str__(self) -> str:
        return f"Question {self.position}: {self.prompt[:60]}"

    def save(self, *args, **kwargs) -> None:
        self.explanation_html = render_markdown(self.explanation)
        if isinstance(self.choices, list) and all(isinstance(c, dict) for c in self.choices):
            self.choices = with_choice_ids(self.choices)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        # Completeness (a right choice, an explanation) is the publish rule's business, so a
        # draft can hold a half-written question; the shape of the choices is checked always.
        if errors := choice_errors(self.choices):
            raise ValidationError(errors)

    @property
    def explanation_lead(self) -> str:
        """The explanation's first sentence, shown beside the verdict of a wrong answer."""
        return first_sentence(self.explanation_html)

    @property
    def labelled_choices(self) -> list[dict]:
        """The choices in the written order, with their letters (A, B, C…): the order of the
        worksheet, the Markdown twin, the API and the editors' pages."""
        return _labelled(self.choices)

    def choices_shown(self, seed: str, *, differ_from: str | None = None) -> list[dict]:
        """The choices in the order one showing of the question puts them, lettered in that
        order: shuffled by `seed` (the same seed, the same order; a reload shows what it
        showed), unless the editors keep the written order. With `differ_from`, the seed of
        an earlier showing, the order is never that showing's: a retry cannot be answered by
        remembering a position."""
        if self.keep_choice_order or len(self.choices) < 2:
            return self.labelled_choices
        order = self._shuffled_order(seed)
        if differ_from not in (None, seed) and order == self._shuffled_order(differ_from):
            order = order[1:] + order[:1]
        return _labelled([self.choices[index] for index in order])

    def _shuffled_order(self, seed: str) -> list[int]:
        order = list(range(len(self.choices)))
        # Not for secrecy: a string seed gives the same order in every process and release.
        random.Random(f"{seed}:{self.key}").shuffle(order)  # noqa: S311
        return order

    @property
    def correct_ids(self) -> frozenset[str]:
        return frozenset(choice["id"] for choice in self.choices if choice["correct"])

    @property
    def correct_letters(self) -> list[str]:
        return [choice["letter"] for choice in self.labelled_choices if choice["correct"]]

    @property
    def takes_several(self) -> bool:
        return len(self.correct_ids) > 1

    def grade(self, choice_ids: Iterable[str]) -> Grade:
        """The one grading rule: whether these choices (by identity) are the right answer.
        Refuses, with a message a learner understands, an empty answer, a choice the question
        does not have, and several choices for a question with one answer."""
        picked = frozenset(choice_id.strip() for choice_id in choice_ids) - {""}
        if not picked:
            raise AnswerNotAccepted("No answer was chosen. Pick one of the choices, then submit.")
        if picked - {choice["id"] for choice in self.choices}:
            raise AnswerNotAccepted(
                "That answer names a choice this question does not have: it may have been "
                "edited since the page was shown. Reload the question and answer it again."
            )
        if len(picked) > 1 and not self.takes_several:
            raise AnswerNotAccepted("This question takes one answer, but several were given.")
        return Grade(choice_ids=picked, correct=picked == self.correct_ids)

    def grade_letters(self, letters: Iterable[str]) -> Grade:
        """Grade letters as written (A is the first choice in the written order): the API's,
        the paper worksheet's and old progress files' way of naming choices."""
        picked = frozenset(letter.strip().upper() for letter in letters) - {""}
        ids = {choice["letter"]: choice["id"] for choice in self.labelled_choices}
        if unknown := sorted(picked - ids.keys()):
            named = ", ".join(f"“{letter[:12]}”" for letter in unknown)
            verb = "is not one of" if len(unknown) == 1 else "are not among"
            raise AnswerNotAccepted(
                f"{named} {verb} this question's choices (they are {', '.join(ids)})."
            )
        return self.grade(ids[letter] for letter in picked)


class AnswerNotAccepted(ValueError):
    """An answer that cannot be graded; the message says why, in a learner's words."""


class Grade(NamedTuple):
    choice_ids: frozenset[str]
    correct: bool

    @property
    def answer(self) -> str:
        """The answer as a review stores it: the chosen choices' identities."""
        return ",".join(sorted(self.choice_ids))


def _labelled(choices: list[dict]) -> list[dict]:
    return [
        {**choice, "letter": choice_letter(index), "number": index + 1}
        for index, choice in enumerate(choices)
    ]


def new_choice_id(taken: Iterable[str] = ()) -> str:
    """A choice's identity: what a learner's answer records, whatever its place or wording."""
    taken = set(taken)
    while (choice_id := secrets.token_hex(3)) in taken:
        pass
    return choice_id


def carry_choice_ids(old: list[dict], new: list[dict]) -> list[dict]:
    """The new choices of a question, each keeping the identity of the old choice it is: the
    one with the same text (so a reorder keeps every identity), else the one in the same place
    (so rewording keeps it); anything else is a new choice."""
    unclaimed = {choice["id"]: choice for choice in old if choice.get("id")}
    by_text = {choice["text"]: choice_id for choice_id, choice in unclaimed.items()}
    kept: list[str | None] = []
    for choice in new:
        choice_id = choice.get("id") or by_text.get(choice.get("text"))
        kept.append(choice_id if choice_id in unclaimed else None)
        unclaimed.pop(choice_id, None)
    for index, choice_id in enumerate(kept):
        if choice_id is None and index < len(old) and old[index].get("id") in unclaimed:
            kept[index] = unclaimed.pop(old[index]["id"])["id"]
    return with_choice_ids(
        [
            choice | {"id": choice_id} if choice_id else choice
            for choice, choice_id in zip(new, kept, strict=True)
        ]
    )


def with_choice_ids(choices: list[dict]) -> list[dict]:
    """The choices, each with an identity of its own (new ones get one)."""
    seen: set[str] = set()
    result = []
    for choice in choices:
        choice_id = choice.get("id")
        if not choice_id or choice_id in seen:
            choice = choice | {
                "id": new_choice_id(seen | {c["id"] for c in choices if c.get("id")})
            }
        seen.add(choice["id"])
        result.append(choice)
    return result


def choice_letter(index: int) -> str:
    """A choice's letter as written: A for the first."""
    return string.ascii_uppercase[index]


def choice_errors(choices: object) -> list[str]:
    """What is wrong with the shape of a question's choices, in words an editor understands."""
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        return ["Choices must be a list of choices."]
    if len(choices) > 6:
        return ["A question has at most 6 choices."]
    errors = []
    # Named by letter, as the admin's form, lesson files and learners' pages name them.
    for index, choice in enumerate(choices):
        letter = choice_letter(index)
        if not isinstance(choice.get("text"), str) or not choice["text"].strip():
            errors.append(f"Choice {letter} has no text.")
        if not isinstance(choice.get("correct"), bool):
            errors.append(f"Choice {letter} must say whether it is correct (true or false).")
        if not isinstance(choice.get("explanation", ""), str):
            errors.append(f"Choice {letter}'s explanation must be text.")
        if not isinstance(choice.get("id", ""), str):
            errors.append(f"Choice {letter}'s id must be text.")
    if not errors:
        right = {_told_apart(c["text"]) for c in choices if c["correct"]}
        for index, choice in enumerate(choices):
            if not choice["correct"] and _told_apart(choice["text"]) in right:
                errors.append(
                    f"Choice {choice_letter(index)} is wrong but reads the same as a right "
                    "choice: a learner who picks it would be told the answer is the very text "
                    "they chose."
                )
    return errors


def _told_apart(text: str) -> str:
    """A choice's text as a learner tells it apart: case and spacing aside."""
    return " ".join(text.split()).casefold()


class Flashcard(models.Model):
    MAX_POSITION = 9999  # what a lesson file's `::: flashcard N` and the admin accept
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="flashcards")
    key = models.CharField(max_length=16, default=new_item_key, editable=False)
    position = models.PositiveSmallIntegerField(default=0)
    front = models.TextField()
    back = models.TextField()

    class Meta:
        ordering = ["lesson", "position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["lesson", "key"], name="flashcard_key_unique_in_lesson"
            ),
        ]

    def __str__(self) -> str:
        return self.front[:60]


class LessonRevision(models.Model):
    """The lesson as its lesson file after an admin save, an import or a restore: what its
    History diffs and restores. The newest KEPT_PER_LESSON of a lesson are kept."""

    class Source(models.TextChoices):
        ADMIN = "admin", "Saved in the admin"
        IMPORT = "import", "Imported from a lesson file"
        RESTORE = "restore", "Restored from an earlier revision"
        EARLIER = "earlier", "As it was before its history was kept"

    KEPT_PER_LESSON = 100

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="revisions")
    created_at = models.DateTimeField(default=timezone.now)
    # None for an import from the command line (and for the state before history was kept).
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    source = models.CharField(max_length=8, choices=Source)
    note = models.CharField(max_length=200, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["lesson", "-created_at"], name="revision_lesson_time")]

    def __str__(self) -> str:
        return f"{self.lesson_id} at {self.created_at:%Y-%m-%d %H:%M:%S}"

    @property
    def by(self) -> str:
        """Who made it, in words: the editor, or how it came."""
        if self.author is not None:
            return self.author.get_username()
        return "the command line" if self.source == self.Source.IMPORT else "-"


class ProblemReport(models.Model):
    """ "Spotted a problem on this page? Tell us": a learner's note for the editors."""

    class Kind(models.TextChoices):
        TYPO = "typo", "A typo"
        WRONG_FACT = "wrong_fact", "A wrong fact"
        UNCLEAR = "unclear", "Something unclear"
        BROKEN = "broken", "Something broken"
        OTHER = "other", "Something else"

    class Status(models.TextChoices):
        NEW = "new", "New"
        ACCEPTED = "accepted", "Accepted"
        FIXED = "fixed", "Fixed"
        DISMISSED = "dismissed", "Dismissed"

    # new → accepted → fixed or dismissed (a new report may be fixed or dismissed straight
    # away); a fixed or dismissed report is reopened as accepted.
    MOVES = {
        Status.NEW: {Status.ACCEPTED, Status.FIXED, Status.DISMISSED},
        Status.ACCEPTED: {Status.FIXED, Status.DISMISSED},
        Status.FIXED: {Status.ACCEPTED},
        Status.DISMISSED: {Status.ACCEPTED},
    }
    OPEN = (Status.NEW, Status.ACCEPTED)

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="reports")
    question = models.ForeignKey(
        Question, on_delete=models.SET_NULL, null=True, blank=True, related_name="reports"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    message = models.TextField(max_length=2000)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.NEW)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        limit_choices_to={"is_staff": True},
        related_name="assigned_reports",
        verbose_name="assigned to",
    )
    resolution_note = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text="What was done about it, or why it was dismissed: for the next editor who "
        "reads the report.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.lesson}"

    def can_move_to(self, status: str) -> bool:
        return status in self.MOVES[self.Status(self.status)]


class ContentVersion(models.Model):
    """One row whose number goes up whenever published content may have changed.

    Pages for visitors without a session are cached under this number, so an editor's change
    shows on the very next request, on every app server, for the price of one small query.
    """

    number = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"Content version {self.number}"

    @classmethod
    def current(cls) -> int:
        return cls.objects.filter(pk=1).values_list("number", flat=True).first() or 0

    @classmethod
    def for_request(cls, request: HttpRequest | None = None) -> int:
        """The version, read once per request (one small query)."""
        if request is None:
            return cls.current()
        site_request = cast(SiteRequest, request)
        if not hasattr(site_request, "content_version"):
            site_request.content_version = cls.current()
        return site_request.content_version

    @classmethod
    def bump(cls) -> None:
        if not cls.objects.filter(pk=1).update(number=models.F("number") + 1):
            cls.objects.get_or_create(pk=1, defaults={"number": 1})


class SearchEntry(models.Model):
    """A published lesson as search reads it: its texts flattened (the Markdown rendered and
    stripped, the questions' prompts and choices joined), one row per published lesson.

    A table of its own rather than columns on Lesson: every lesson query would otherwise carry
    the search vector and the flattened text. lessons.search keeps it and reads it; on
    PostgreSQL `vector` holds the weighted tsvector (GIN-indexed), on SQLite an FTS5 table reads
    these columns as its external content (both made by migration 0018). On SQLite a migration
    that alters this table remakes it and loses the FTS5 triggers: it must make them again.
    """

    lesson = models.OneToOneField(
        Lesson, on_delete=models.CASCADE, primary_key=True, related_name="search_entry"
    )
    title = models.TextField()
    summary = models.TextField()
    body = models.TextField()
    questions = models.TextField()
    vector = SearchVectorField(null=True)

    def __str__(self) -> str:
        return f"Search entry of {self.title}"
