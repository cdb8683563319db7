"""Migrations keep the previous release working (docs/deploy.md, "Upgrades").

`migrate` runs while the old code still serves, so a release's migrations may only expand the
schema: a new column is nullable or has a database default (a plain `default=` lives in Python
only, and the old code's inserts fail on the NOT NULL column: 247 refused answers in the operators'
review). Removing or renaming a column or table waits for the release after the one whose code
stopped using it, and is then listed in CONTRACTIONS with that reason.
"""

from __future__ import annotations

import threading

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, connections, migrations
from django.db.migrations.loader import MigrationLoader
from django.db.models import NOT_PROVIDED

LOCAL_APPS = {"lessons", "practice", "lightmysky"}
# (app, migration): why the code of the release before no longer used what it removes.
CONTRACTIONS: dict[tuple[str, str], str] = {
    ("lightmysky", "0004_session_learner_id_removed"): (
        "drops the session column only the site's own session engine read and wrote; that engine "
        "is gone in the same change, so workers still on the code before it fail learners' pages "
        "from `migrate` until their reload (docs/deploy.md, section 8, says to reload at once)"
    ),
}
BREAKING = (
    migrations.RemoveField,
    migrations.DeleteModel,
    migrations.RenameField,
    migrations.RenameModel,
)


def policy_violations() -> list[str]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    found = []
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        if app not in LOCAL_APPS:
            continue
        created = {
            op.name.lower() for op in migration.operations if isinstance(op, migrations.CreateModel)
        }
        for op in migration.operations:
            where = f"{app}.{name}: {op.describe()}"
            if isinstance(op, migrations.AddField) and op.model_name.lower() not in created:
                field = op.field
                if not (field.null or field.many_to_many or field.db_default is not NOT_PROVIDED):
                    found.append(f"{where} is NOT NULL without db_default")
            elif isinstance(op, BREAKING) and (app, name) not in CONTRACTIONS:
                found.append(f"{where} breaks the previous release (see CONTRACTIONS)")
    return found


def test_migrations_keep_the_previous_release_working():
    assert policy_violations() == []


def test_the_policy_catches_a_new_column_with_only_a_python_default(monkeypatch):
    from django.db import models

    operation = migrations.AddField("review", "client", models.CharField(default="web"))
    bad = type("Migration", (migrations.Migration,), {"operations": [operation]})
    original = MigrationLoader.load_disk

    def load_disk(self):
        original(self)
        self.disk_migrations[("practice", "9999_client")] = bad("9999_client", "practice")

    monkeypatch.setattr(MigrationLoader, "load_disk", load_disk)
    assert policy_violations() == [
        "practice.9999_client: Add field client to review is NOT NULL without db_default"
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's table locks")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "app, before, migration, table",
    [
        ("lessons", "0014", "0015", "lessons_lesson"),  # drops and rebuilds an index
        ("lightmysky", "0002", "0003", "django_session"),  # adds a column
        ("lightmysky", "0003", "0004", "django_session"),  # drops it again
    ],
)
def test_a_migration_that_locks_a_table_gives_up_behind_a_backup_instead_of_stalling_pages(
    app, before, migration, table
):
    """Dropping an index or adding or dropping a column locks the table against every read; behind a
    backup's long transaction the migration waits 5 s at most, then fails and can be run
    again."""
    call_command("migrate", app, before, verbosity=0)
    backup = connections.create_connection("default")
    try:
        backup.set_autocommit(False)
        with backup.cursor() as cursor:  # as pg_dump does: a transaction that read the table
            cursor.execute(f"SELECT count(*) FROM {table}")
        # Without the limit the migration would wait for the backup: end it after 20 s, so
        # that the test fails rather than hangs.
        ends = threading.Timer(20, backup.connection.rollback)
        ends.start()
        try:
            with pytest.raises(OperationalError, match="lock timeout"):
                call_command("migrate", app, migration, verbosity=0)
        finally:
            ends.cancel()
        backup.rollback()
        call_command("migrate", app, migration, verbosity=0)  # once the backup is done
    finally:
        backup.close()
        call_command("migrate", verbosity=0)  # every app: going back unapplied their dependants
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'lesson_unpublished'")
        assert "(id, status)" in cursor.fetchone()[0]
        cursor.execute(
            "SELECT data_type FROM information_schema.columns"
            " WHERE table_name = 'django_session' AND column_name = 'learner_id'"
        )
        assert cursor.fetchone() is None  # added by 0003, dropped by 0004
