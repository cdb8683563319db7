"""The learner's and the question's own indexes on the tables every answer writes are dropped:
an index that begins with the same column serves each lookup (Memory's, Review's and Round's
Meta), and each answer wrote the redundant ones for nothing. Dropped by name, not through
Django's AlterField, which on SQLite copies the whole table to drop one index."""

import django.db.models.deletion
from django.db import migrations, models

INDEXES = [
    ("practice_memory", "learner_id", "practice_memory_learner_id_d2288673"),
    ("practice_memory", "question_id", "practice_memory_question_id_4bb2f808"),
    ("practice_review", "learner_id", "practice_review_learner_id_ea4ca749"),
    ("practice_review", "question_id", "practice_review_question_id_c38f4922"),
    ("practice_round", "learner_id", "practice_round_learner_id_dee836d8"),
]


def learner(**options):
    return models.ForeignKey(
        db_index=False,
        on_delete=django.db.models.deletion.CASCADE,
        to="practice.learner",
        **options,
    )


def question():
    return models.ForeignKey(
        blank=True,
        db_index=False,
        null=True,
        on_delete=django.db.models.deletion.CASCADE,
        to="lessons.question",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0013_lesson_unpublished_index"),
        ("practice", "0008_review_origin_preview"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name="memory", name="learner", field=learner()),
                migrations.AlterField(model_name="memory", name="question", field=question()),
                migrations.AlterField(model_name="review", name="learner", field=learner()),
                migrations.AlterField(model_name="review", name="question", field=question()),
                migrations.AlterField(
                    model_name="round", name="learner", field=learner(related_name="rounds")
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{name}"',
                    reverse_sql=f'CREATE INDEX "{name}" ON "{table}" ("{column}")',
                )
                for table, column, name in INDEXES
            ],
        ),
    ]
