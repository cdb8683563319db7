"""The evidence a guess cannot fake (practice.sky.Evidence): each memory keeps the log-odds that
its learner knows the item rather than answers at random, the start of its current run of right
answers and whether its last scheduled answer was missed; each review keeps what it did to its
star. Every memory's evidence is replayed from its scheduled reviews under the new rule, which
asks more than the old one did: a star lit by the old rule on too little evidence shows kindled
now, and stars ever lit counts only what the new rule would have lit. That is the one time a
learner's count of stars ever lit can go down, and it is why (reason for the RunPython).
"""

import math
from datetime import timedelta

from django.db import migrations, models

BATCH = 2000
AGAIN, GOOD = 1, 3
NO_EVIDENCE, KINDLING, CONFIRMED = 0, 1, 2
SLIP, LIGHT_SCORE = 0.2, math.log(20)
CONFIRMATION_GAP = timedelta(days=1)
FLASHCARD_GUESS_RATE = 1 / 3


def _guess_rate(choices):
    """practice.sky.guess_rate as it stood when this migration was written (frozen here, as is
    `_after`, so that a later change of the rule does not change what this migration did)."""
    if len(choices) < 2:
        return 0.5
    several = sum(1 for choice in choices if choice.get("correct")) > 1
    return 1 / (2 ** len(choices) - 1) if several else 1 / len(choices)


def _after(evidence, rating, correct, guess_rate, now):
    level, score, since, lit_at, missed = evidence
    if correct is None:
        outcome = "wrong" if rating == AGAIN else "right"
    else:
        outcome = "wrong" if not correct else ("right" if rating >= GOOD else "guessed")
    if outcome == "wrong":
        return NO_EVIDENCE, score + math.log(SLIP / (1 - guess_rate)), None, lit_at, True
    if outcome == "guessed":
        return NO_EVIDENCE, score, None, lit_at, False
    score += math.log((1 - SLIP) / guess_rate)
    since = since or now
    if level == CONFIRMED or (score >= LIGHT_SCORE and now - since >= CONFIRMATION_GAP):
        return CONFIRMED, score, since, lit_at or now, False
    return KINDLING, score, since, lit_at, False


def replay_evidence(apps, schema_editor):
    Memory = apps.get_model("practice", "Memory")
    Review = apps.get_model("practice", "Review")
    Question = apps.get_model("lessons", "Question")
    rates = {pk: _guess_rate(choices) for pk, choices in Question.objects.values_list("pk", "choices")}
    found = {}
    reviews = (
        Review.objects.filter(practice=False)
        .order_by("learner_id", "question_id", "flashcard_id", "reviewed_at", "pk")
        .values_list("learner_id", "question_id", "flashcard_id", "rating", "correct", "reviewed_at")
    )
    for learner_id, question_id, flashcard_id, rating, correct, at in reviews.iterator(
        chunk_size=BATCH
    ):
        key = (learner_id, question_id, flashcard_id)
        rate = rates.get(question_id, 0.5) if question_id else FLASHCARD_GUESS_RATE
        start = (NO_EVIDENCE, 0.0, None, None, False)
        found[key] = _after(found.get(key, start), rating, correct, rate, at)
    fields = ["evidence", "evidence_score", "streak_since", "lit_at", "missed"]
    changed = []
    memories = Memory.objects.only("pk", "learner_id", "question_id", "flashcard_id", "last_rating")
    for memory in memories.order_by("pk").iterator(chunk_size=BATCH):
        key = (memory.learner_id, memory.question_id, memory.flashcard_id)
        if key in found:
            values = found[key]
        else:  # no scheduled review left (a log trimmed, or a state imported on its own)
            values = (NO_EVIDENCE, 0.0, None, None, memory.last_rating == AGAIN)
        for field, value in zip(fields, values, strict=True):
            setattr(memory, field, value)
        changed.append(memory)
        if len(changed) >= BATCH:
            Memory.objects.bulk_update(changed, fields)
            changed = []
    Memory.objects.bulk_update(changed, fields)


class Migration(migrations.Migration):
    dependencies = [
        ("practice", "0009_indexes_led_by_learner_or_question_only"),
        ("lessons", "0015_lesson_unpublished_covers_status"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="evidence_score",
            field=models.FloatField(db_default=0.0, default=0.0),
        ),
        migrations.AddField(
            model_name="memory",
            name="missed",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="memory",
            name="streak_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="review",
            name="star_change",
            field=models.CharField(blank=True, db_default="", default="", max_length=7),
        ),
        migrations.RunPython(replay_evidence, migrations.RunPython.noop),
    ]
