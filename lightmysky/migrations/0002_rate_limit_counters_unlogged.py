"""Rate-limit counters in an UNLOGGED table on PostgreSQL.

Every limited POST (each answer) updates a counter in a transaction of its own. Logged, that
transaction's COMMIT waits for the write-ahead log to reach the disk (2.6 ms on the development
machine, more than the rest of the answer), holding the address's counter row all the while, so
the answers of everyone behind one address (a school) queue on that flush. An unlogged table
writes no log: its commits do not wait. Its rows are lost if PostgreSQL crashes and are not
copied to standbys, which for counters of one minute means a limit that starts afresh. SQLite
keeps its log with `synchronous=NORMAL` and does not flush on commit; nothing changes there.
"""

from django.db import migrations


def _set(persistence: str):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            table = apps.get_model("lightmysky", "RateLimitCounter")._meta.db_table
            schema_editor.execute(
                f"ALTER TABLE {schema_editor.quote_name(table)} SET {persistence}"
            )

    return operation


class Migration(migrations.Migration):
    dependencies = [("lightmysky", "0001_initial")]

    operations = [migrations.RunPython(_set("UNLOGGED"), _set("LOGGED"), elidable=False)]
