"""Drop the `learner_id` column that lightmysky.0003 added to Django's session table.

It served a session engine of the site's own, which read the session and the learner's rows in
one statement; sessions are Django's own engine again, which neither reads nor writes it. The
learner stays in the session's data, so no browser loses its progress. Like 0003, it waits at
most 5 s for the table's lock on PostgreSQL (docs/deploy.md, "Upgrades"); undone, it adds the
column back, empty, as 0003 did.
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
    dependencies = [("lightmysky", "0003_session_learner_id")]

    operations = [
        migrations.RunPython(
            _alter("DROP COLUMN learner_id"),
            _alter("ADD COLUMN learner_id bigint NULL"),
            elidable=False,
        )
    ]
