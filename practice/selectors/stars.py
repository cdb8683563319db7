"""A learner's stars: each item's state from their memory of it (practice.sky's rule), a
lesson's constellation, the header's counter, and what an answer or a round did to the stars."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count
from django.utils.text import Truncator

from lessons.models import Lesson, Question
from lessons.selectors import Item, LessonPage, items_of
from lightmysky.lib.markdown import plain_text, render_inline_markdown
from practice import scheduling, sky
from practice.drawing import Constellation, Star
from practice.models import Learner, Memory, Review, RoundProgress
from practice.selectors import Memories, lesson_memories, memories_of


@dataclass(frozen=True)
class SkyCounter:
    """The header's counts: what was earned first (stars lit, kindled), then what is due."""

    lit: int
    kindled: int
    due: int
    ever_lit: int

    @property
    def in_words(self) -> str:
        """'3 lit · 5 kindled · 2 due', leaving out what is 0: no count in the header reads 0
        (a first round of right answers reads '8 kindled'). Empty when every count is 0."""
        counts = ((self.lit, sky.LIT), (self.kindled, sky.KINDLED), (self.due, sky.DUE))
        return " · ".join(f"{count} {word}" for count, word in counts if count)


def sky_counter(*, learner: Learner, now: datetime) -> SkyCounter:
    """The header's counts over the published lessons (the sky's rule: sky.counter_conditions),
    in one query written out: every learner's page shows them, and building it with the ORM
    (`sky_counter_by_orm`, the same counts) took a fifth of a lesson page's time."""
    with connection.cursor() as cursor:
        cursor.execute(
            _COUNTER_SQL,
            {
                "learner": learner.pk,
                "now": connection.ops.adapt_datetimefield_value(now),
                "kindling": sky.KINDLING,
                "confirmed": sky.CONFIRMED,
                "published": Lesson.Status.PUBLISHED.value,
            },
        )
        lit, kindled, due, ever_lit = cursor.fetchone()
    return SkyCounter(lit=lit, kindled=kindled, due=due, ever_lit=ever_lit)


# sky.counter_conditions in SQL. The memories of published lessons are found as "not in a draft"
# (as Memory.objects.in_published_lessons does): the drafts' own index finds the few drafts.
_COUNTER_SQL = """
    SELECT
        COUNT(CASE WHEN evidence = %(confirmed)s THEN 1 END),
        COUNT(CASE WHEN evidence = %(kindling)s THEN 1 END),
        COUNT(CASE WHEN due <= %(now)s THEN 1 END),
        COUNT(lit_at)
    FROM practice_memory
    WHERE learner_id = %(learner)s
        AND lesson_id NOT IN (SELECT id FROM lessons_lesson WHERE NOT (status = %(published)s))
"""


def sky_counter_by_orm(*, learner: Learner, now: datetime) -> SkyCounter:
    """What `sky_counter` reads, as the ORM builds it from sky.counter_conditions (for the test
    that holds the two together)."""
    conditions = sky.counter_conditions(now)
    counts = (
        Memory.objects.filter(learner_id=learner.pk)
        .in_published_lessons()
        .aggregate(
            **{name: Count("pk", filter=condition) for name, condition in conditions.items()}
        )
    )
    return SkyCounter(**counts)


def lesson_memories_and_counter(
    *, learner: Learner, lesson: Lesson, now: datetime
) -> tuple[Memories, SkyCounter]:
    """The learner's memories of a lesson's items and the header's counter, in two queries (one
    query written out for both was only a tenth faster: under the bar for code kept for speed)."""
    return lesson_memories(learner=learner, lesson=lesson), sky_counter(learner=learner, now=now)


def lesson_stars(*, learner: Learner | None, page: LessonPage, now: datetime) -> dict:
    """A lesson's constellation for this learner, the header's counter (None for a visitor) and
    the memories they are drawn from, as a page's context, in two queries."""
    if learner is None:
        memories: Memories = {}
        counter = None
    else:
        memories, counter = lesson_memories_and_counter(
            learner=learner, lesson=page.lesson, now=now
        )
    constellation = constellation_for(
        learner=learner, lesson=page.lesson, items=page.items, now=now, memories=memories
    )
    return {"constellation": constellation, "sky_counter": counter, "memories": memories}


def star(
    kind: str,
    pk: int,
    key: str,
    number: int,
    title: str,
    memories: Memories,
    now: datetime,
    config: scheduling.SchedulerSettings,
    *,
    x: float,
    y: float,
) -> Star:
    """One item's star where it is drawn, in the state the learner's memory of it gives."""
    memory, missed, evidence, ever_lit = memories.get(
        (kind, pk), (None, False, sky.NO_EVIDENCE, False)
    )
    state = sky.star_state(memory, now, config, evidence=evidence, missed=missed)
    label = f"{kind.capitalize()} {number} of {title}: {state.describe(now)}"
    return Star(kind, number, key, label, state, x, y, ever_lit=ever_lit)


def constellation_for(
    *,
    learner: Learner | None,
    lesson: Lesson,
    items: Sequence[Item],
    now: datetime,
    memories: Memories | None = None,
) -> Constellation:
    """One lesson's stars for this learner, laid out on their own: one query for the learner's
    memories of the lesson, none when they are given."""
    if memories is None:
        memories = lesson_memories(learner=learner, lesson=lesson)
    config = scheduling.SchedulerSettings.from_django()
    offsets = sky.star_offsets(lesson.public_id, tuple(item.key for item in items), radius=60)
    stars = tuple(
        star(
            kind,
            pk,
            key,
            number,
            lesson.title,
            memories,
            now,
            config,
            x=round(80 + dx, 1),
            y=round(70 + dy, 1),
        )
        for (_, kind, pk, key, number), (dx, dy) in zip(items, offsets, strict=True)
    )
    return Constellation(
        lesson.pk, lesson.public_id, lesson.title, lesson.get_absolute_url(), stars, x=80, y=70
    )


# A round's answers and end, in the stars ------------------------------------------------------


# How a sitting's end names a right answer and a miss, for the kinds of item it asked.
SITTING_WORDS = {
    "questions": {
        "right": "a right answer",
        "rights": "right answers",
        "miss": "a wrong answer or a guess",
        "each_miss": "wrong answer",
        "items": "questions",
        "answered": "answered",
    },
    "cards": {
        "right": "a rating of Hard or better",
        "rights": "ratings of Hard or better",
        "miss": "a rating of Again",
        "each_miss": "Again",
        "items": "cards",
        "answered": "rated",
    },
    "both": {
        "right": "a right answer or a rating of Hard or better",
        "rights": "right answers or ratings of Hard or better",
        "miss": "a wrong answer, a guess or a rating of Again",
        "each_miss": "wrong answer or Again",
        "items": "items",
        "answered": "answered or rated",
    },
}


def sitting_stars(reviews: list[Review], names: dict[tuple[str, int], str]) -> dict[str, Any]:
    """How many stars a sitting's answers lit, kindled and put out (left unlit after a wrong
    answer or a guess), a star changed twice in it counted by its last change; how many of
    the stars it answered are left kindled, and the answer that left the one nearest to lit
    (what it still needs) with that star's name from `names` (by kind and pk); how many of its
    answers were to questions and to flashcards, and the words for them (SITTING_WORDS); and
    how many were practice, given within an hour of seeing the item's answer (sky.SITTING)."""
    changes: dict[tuple, str] = {}
    last_scheduled: dict[tuple, Review] = {}
    for review in sorted(reviews, key=lambda r: r.reviewed_at):
        item = review.question_id, review.flashcard_id
        if review.star_change:
            changes[item] = review.star_change
        if not review.practice:
            last_scheduled[item] = review
    words = list(changes.values())
    # Left kindled: a right answer last, and still answers to go (a lit star needs none).
    kindled = [
        review
        for review in last_scheduled.values()
        if review.rating > scheduling.AGAIN and review.answers_to_light
    ]
    nearest = min(
        kindled,
        key=lambda r: (
            r.answers_to_light,
            r.lights_later_from or r.comes_back_at or r.reviewed_at,
        ),
        default=None,
    )
    cards = sum(1 for review in reviews if review.flashcard_id)
    questions = len(reviews) - cards
    kinds = "both" if questions and cards else "cards" if cards else "questions"
    return {word: words.count(word) for word in (sky.LIT, sky.KINDLED, sky.UNLIT)} | {
        "questions": questions,
        "cards": cards,
        "practised": (practised := sum(1 for review in reviews if review.practice)),
        "all_practice": bool(reviews) and practised == len(reviews),
        "left_kindled": len(kindled),
        "nearest": nearest,
        "nearest_name": nearest and names.get(nearest.item_ref),
        "words": SITTING_WORDS[kinds],
    }


def sitting_summary(*, learner: Learner, reviews: list[Review], now: datetime) -> dict:
    """What a sitting's answers did (a review set, a flashcard set, a worksheet's answers;
    practice among them changed no star): the stars they lit and kindled, drawn in their
    lessons' constellations, and when the items answered come back. Four queries, however
    long the sitting."""
    lesson_ids = sorted({review.lesson_id for review in reviews})
    lessons = Lesson.objects.select_related("subject").in_bulk(lesson_ids)
    items: dict[int, list[Item]] = {pk: [] for pk in lesson_ids}
    for item in items_of(lesson_ids):
        items[item.lesson_id].append(item)
    memories = memories_of(learner, lesson_id__in=lesson_ids)
    constellations = [
        constellation_for(
            learner=learner, lesson=lessons[pk], items=items[pk], now=now, memories=memories
        )
        for pk in lesson_ids
        if pk in lessons
    ]
    answered = {review.item_ref for review in reviews}
    dues = [memories[item][0].due for item in answered if item in memories]
    names = {
        (item.kind, item.pk): f"the star of {item.kind} {item.number} of “{lessons[pk].title}”"
        for pk, lesson_items in items.items()
        if pk in lessons
        for item in lesson_items
    }
    return (
        sitting_stars(reviews, names) | _comes_back(dues, now) | {"constellations": constellations}
    )


def _comes_back(dues: list[datetime], now: datetime) -> dict:
    """How many come back on each day ahead, "comes_back": [('tomorrow', 2), ('in 3 days', 5)],
    and when each does, "comes_back_at", for the page's script to count again by the learner's
    own days (these are UTC's)."""
    ahead = sorted(due for due in dues if due > now)
    comes_back: dict[str, int] = {}
    for due in ahead:
        day = day_words(due, now)
        comes_back[day] = comes_back.get(day, 0) + 1
    return {"comes_back": list(comes_back.items()), "comes_back_at": ahead}


def round_outcome(progress: RoundProgress, constellation: Constellation, now: datetime) -> dict:
    """What the round did to the lesson's stars, and when its questions come back."""
    stars = {s.key: s for s in constellation.stars if s.kind == "question"}
    dues = [
        star.state.due
        for question in progress.questions
        if (star := stars.get(question.key)) and star.state.due
    ]
    first_pass = progress.reviews[: len(progress.questions)]  # the retries are practice
    # Named by its prompt: the round asks in its own order, so "question 4" of the lesson
    # need not be the round's question 4.
    names = {
        ("question", q.pk): f"the star of “{Truncator(plain_prompt(q)).words(10)}”"
        for q in progress.questions
    }
    return (
        sitting_stars(first_pass, names)
        | _comes_back(dues, now)
        | {"practice_until": practice_until(progress.reviews, now)}
    )


def plain_prompt(question: Question) -> str:
    """A question's prompt as its reader sees it, without Markdown's marks."""
    return plain_text(render_inline_markdown(question.prompt))


def practice_until(reviews: list[Review], now: datetime) -> datetime | None:
    """Until when answering these items again is practice (sky.SITTING after the last of
    these answers), if that is still to come."""
    until = max((review.reviewed_at for review in reviews), default=now) + sky.SITTING
    return until if reviews and until > now else None


def day_words(moment: datetime, now: datetime) -> str:
    days = (moment.date() - now.date()).days
    if days <= 0:
        return "later today"
    if days == 1:
        return "tomorrow"
    if days < 14:
        return f"in {days} days"
    # Beyond about ten months a day and month alone read as this year's or last year's.
    year = f" {moment.year}" if days > 300 else ""
    return f"on {moment:%a} {moment.day} {moment:%b}{year}"
