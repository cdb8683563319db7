from datetime import timedelta

from django.db import migrations, models

BATCH = 2000
AGAIN, HARD, GOOD = 1, 2, 3
NO_EVIDENCE, KINDLING, CONFIRMED = 0, 1, 2
CONFIRMATION_GAP = timedelta(days=1)


def _after(evidence, lit_at, rating, graded, previous, now):
    """practice.sky.evidence_after as it stood when this migration was written (frozen here so
    that a later change of the rule does not change what this migration did)."""
    if rating == AGAIN:
        return NO_EVIDENCE, lit_at
    if rating < (GOOD if graded else HARD):  # a right answer the learner said they guessed
        return evidence, lit_at
    if evidence == CONFIRMED or (previous is not None and now - previous >= CONFIRMATION_GAP):
        return CONFIRMED, lit_at or now
    return KINDLING, lit_at


def replay_evidence(apps, schema_editor):
    """Each memory's evidence and first-lit moment, from its scheduled reviews in order, as
    answering them one by one would have set them.

    A memory with no scheduled review left (its log trimmed, or a state imported on its own)
    counts as kindled when its last rating remembered it: the log cannot show more.
    """
    Memory = apps.get_model("practice", "Memory")
    Review = apps.get_model("practice", "Review")
    found = {}
    reviews = (
        Review.objects.filter(practice=False)
        .order_by("learner_id", "question_id", "flashcard_id", "reviewed_at", "pk")
        .values_list("learner_id", "question_id", "flashcard_id", "rating", "reviewed_at")
    )
    for learner_id, question_id, flashcard_id, rating, reviewed_at in reviews.iterator(
        chunk_size=BATCH
    ):
        key = (learner_id, question_id, flashcard_id)
        evidence, lit_at, previous = found.get(key, (NO_EVIDENCE, None, None))
        evidence, lit_at = _after(
            evidence, lit_at, rating, question_id is not None, previous, reviewed_at
        )
        found[key] = (evidence, lit_at, reviewed_at)
    changed = []
    memories = Memory.objects.only(
        "pk", "learner_id", "question_id", "flashcard_id", "last_rating"
    ).order_by("pk")
    for memory in memories.iterator(chunk_size=BATCH):
        key = (memory.learner_id, memory.question_id, memory.flashcard_id)
        if key in found:
            memory.evidence, memory.lit_at, _ = found[key]
        elif memory.last_rating >= (GOOD if memory.question_id else HARD):
            memory.evidence, memory.lit_at = KINDLING, None
        else:
            continue
        if memory.evidence != NO_EVIDENCE or memory.lit_at is not None:
            changed.append(memory)
        if len(changed) >= BATCH:
            Memory.objects.bulk_update(changed, ["evidence", "lit_at"])
            changed = []
    Memory.objects.bulk_update(changed, ["evidence", "lit_at"])


class Migration(migrations.Migration):

    dependencies = [
        ("practice", "0006_review_answer_choice_ids"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="evidence",
            field=models.PositiveSmallIntegerField(
                choices=[(0, "none"), (1, "kindled"), (2, "lit")], db_default=0, default=0
            ),
        ),
        migrations.AddField(
            model_name="memory",
            name="lit_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(replay_evidence, migrations.RunPython.noop),
    ]
