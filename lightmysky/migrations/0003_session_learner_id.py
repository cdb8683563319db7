"""A column on Django's session table naming the session's learner (lightmysky/sessions.py).

The learner is also in the session's data, but the database cannot read that: with the column, a
learner's page can read the session and the learner's rows in one statement. It is filled when
a session is saved; a row saved before this migration leaves it null until then, and pages read
such a session as they always have. Adding a nullable column without a default changes only
PostgreSQL's catalogue, but it takes a lock that waits behind any long transaction (the daily
pg_dump) while every page waits behind it: it gives up after 5 s instead, and `migrate` can be
run again later (docs/deploy.md, "Upgrades").
"""

from django.db import migrations


def _alter(change: str):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute("SET LOCAL lock_timeout = '5s'")
        table = schema_editor.quote_name(apps.get_model("sessions", "Session")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} {change}")

    return operation


class Migration(migrations.Migration):
    dependencies = [("lightmysky", "0002_rate_limit_counters_unlogged"), ("sessions", "0001_initial")]

    operations = [
        migrations.RunPython(
            _alter("ADD COLUMN learner_id bigint NULL"),
            _alter("DROP COLUMN learner_id"),
            elidable=False,
        )
    ]
