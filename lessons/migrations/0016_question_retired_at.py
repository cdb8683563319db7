from django.db import migrations, models


def wait_at_most_five_seconds_for_the_table(apps, schema_editor):
    """Dropping and adding a unique index locks the questions table against reads until the
    migration commits: behind a backup's long transaction it gives up after 5 s (as 0015 does)."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET LOCAL lock_timeout = '5s'")


class Migration(migrations.Migration):
    """A question replaced by a new one is retired, not deleted: it keeps its learners' answers
    and leaves the lesson, so its position is free for the new question."""

    dependencies = [
        ("lessons", "0015_lesson_unpublished_covers_status"),
    ]

    operations = [
        migrations.RunPython(wait_at_most_five_seconds_for_the_table, migrations.RunPython.noop),
        migrations.AlterModelOptions(
            name="question",
            options={"base_manager_name": "everything", "ordering": ["lesson", "position"]},
        ),
        migrations.AlterModelManagers(
            name="question",
            managers=[
                ("objects", models.Manager()),
                ("everything", models.Manager()),
            ],
        ),
        migrations.AddField(
            model_name="question",
            name="retired_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.RemoveConstraint(
            model_name="question",
            name="question_position_unique_in_lesson",
        ),
        migrations.AddConstraint(
            model_name="question",
            constraint=models.UniqueConstraint(
                condition=models.Q(("retired_at__isnull", True)),
                fields=("lesson", "position"),
                name="question_position_unique_in_lesson",
            ),
        ),
        migrations.RunPython(migrations.RunPython.noop, wait_at_most_five_seconds_for_the_table),
    ]
