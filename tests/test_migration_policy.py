"""Migrations keep the previous release working (docs/deploy.md, "Upgrades").

`migrate` runs while the old code still serves, so a release's migrations may only expand the
schema. Each operation that the previous release's code can trip over is flagged:

- a new column that is NOT NULL without a database default (a plain `default=` lives in Python
  only, and the old code's inserts fail, refusing answers);
- an `AlterField` that drops a column's database default or makes it NOT NULL, judged against the
  field as the migrations before it left it (the old code's inserts fail the same way);
- a new constraint (`AddConstraint`, a unique index, `unique_together`): rows the old code
  writes may break it;
- a removal or a rename of a column, a table or a model;
- `RunSQL` and `RunPython` without a stated reason: a docstring on the function, or an entry in
  REASONS.

An operation on a model that the same migration creates is never flagged (the old code does not
know it). A flagged migration is allowed once listed in REASONS with why it is safe, or why its
breakage is accepted (removals wait for the release after the one whose code stopped using them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, connections, migrations, models
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations.base import Operation
from django.db.migrations.state import ProjectState
from django.db.models import NOT_PROVIDED

LOCAL_APPS = {"lessons", "practice", "lightmysky"}
# (app, migration): why what the policy flags in it does not break the release before it.
REASONS: dict[tuple[str, str], str] = {
    ("lessons", "0003_editors_group"): "creates the Editors group and its permissions: rows only",
    ("lessons", "0006_rerender_markdown"): (
        "renders stored Markdown again into the same *_html columns the old code reads"
    ),
    ("lessons", "0008_question_position_floor"): (
        "replaces the check 1 <= position <= 8 by position >= 1, which every row the old code "
        "writes meets: a looser constraint"
    ),
    ("lessons", "0010_choice_ids"): (
        "gives each stored choice an id, a key of the JSON that the code before it did not read"
    ),
    ("lessons", "0016_question_retired_at"): (
        "replaces the unique (lesson, position) by the same over questions not retired: looser, "
        "and the old code never retires one"
    ),
    ("lightmysky", "0002_rate_limit_counters_unlogged"): (
        "makes the counters' table UNLOGGED (its module docstring): columns and queries unchanged"
    ),
    ("lightmysky", "0003_session_learner_id"): (
        "adds a nullable column by SQL (its module docstring says why): the old code never names it"
    ),
    ("lightmysky", "0004_session_learner_id_removed"): (
        "drops the session column only the site's own session engine read and wrote; that engine "
        "is gone in the same change, so workers still on the code before it fail learners' pages "
        "from `migrate` until their reload (docs/deploy.md, section 8, says to reload at once)"
    ),
    ("practice", "0003_learner_browser_hash"): (
        "a new nullable column made unique: the old code never writes it, and NULLs never clash"
    ),
    ("practice", "0006_review_answer_choice_ids"): (
        "rewrites stored answers from letters to the choices' ids (its module docstring): data "
        "only, the column is unchanged"
    ),
    ("practice", "0010_evidence_score_and_star_change"): (
        "replays every memory's evidence into the columns it adds (its module docstring says why)"
    ),
}
REMOVALS_AND_RENAMES = (
    migrations.RemoveField,
    migrations.DeleteModel,
    migrations.RenameField,
    migrations.RenameModel,
    migrations.AlterModelTable,
)
CONSTRAINTS = (migrations.AddConstraint, migrations.AlterUniqueTogether)


def _field_problem(before: models.Field | None, after: models.Field) -> str | None:
    """What an AlterField from `before` to `after` takes away from the old code, if anything."""
    if before is None:
        return None
    if before.db_default is not NOT_PROVIDED and after.db_default is NOT_PROVIDED:
        return "drops the column's database default (the old code's inserts rely on it)"
    if before.null and not after.null:
        return "makes the column NOT NULL (the old code may write NULL)"
    if after.unique and not before.unique:
        return "adds a unique constraint (rows the old code writes may break it)"
    return None


def operation_problem(app: str, op: Operation, state: ProjectState) -> str | None:
    """Why `op`, run on the schema `state` describes, breaks the previous release's code."""
    if isinstance(op, migrations.AddField):
        field = op.field
        if not (field.null or field.many_to_many or field.db_default is not NOT_PROVIDED):
            return "is NOT NULL without db_default"
        if field.unique:
            return "adds a unique constraint (rows the old code writes may break it)"
    elif isinstance(op, migrations.AlterField):
        model = state.models[app, op.model_name_lower]
        return _field_problem(model.fields.get(op.name), op.field)
    elif isinstance(op, CONSTRAINTS):
        return "adds a constraint (rows the old code writes may break it)"
    elif isinstance(op, REMOVALS_AND_RENAMES):
        return "removes or renames what the old code uses"
    elif isinstance(op, migrations.RunPython) and op.code is migrations.RunPython.noop:
        return None  # only its reverse does something
    elif isinstance(op, migrations.RunPython) and not (op.code.__doc__ or "").strip():
        return "runs code with no stated reason (a docstring on the function)"
    elif isinstance(op, migrations.RunSQL):
        return "runs SQL with no stated reason"
    return None


def _targets(op: Operation) -> str | None:
    """The model an operation changes, lower-cased, if it names one."""
    name = getattr(op, "model_name_lower", None) or getattr(op, "name_lower", None)
    return name if isinstance(name, str) else None


def _walk(loader: MigrationLoader) -> Iterator[tuple[str, str, Operation, ProjectState, set]]:
    """Every operation of every migration in the order `migrate` applies them, with the project
    state just before it and the models its own migration created."""
    state = ProjectState(real_apps=loader.unmigrated_apps)
    plan = []
    for leaf in sorted(loader.graph.leaf_nodes()):
        plan += [node for node in loader.graph.forwards_plan(leaf) if node not in plan]
    for app, name in plan:
        migration = loader.graph.nodes[app, name]
        created = {
            op.name_lower for op in migration.operations if isinstance(op, migrations.CreateModel)
        }
        for op in migration.operations:
            yield app, name, op, state, created
            op.state_forwards(app, state)


def policy_violations() -> list[str]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    found = []
    for app, name, op, state, created in _walk(loader):
        if app not in LOCAL_APPS or (app, name) in REASONS or _targets(op) in created:
            continue
        if isinstance(op, migrations.CreateModel):
            continue
        if problem := operation_problem(app, op, state):
            found.append(f"{app}.{name}: {op.describe()} {problem}")
    return sorted(found)


def test_migrations_keep_the_previous_release_working():
    assert policy_violations() == []


def test_every_listed_reason_is_of_a_migration_that_exists():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    assert set(REASONS) <= set(loader.disk_migrations)


@pytest.fixture
def next_migration(monkeypatch):
    """Adds a migration of the given operations after practice's newest one, as the next
    release would, and returns what the policy says of it."""

    def check(*operations: Operation, app: str = "practice") -> list[str]:
        original = MigrationLoader.load_disk

        def load_disk(self):
            original(self)
            newest = max(name for label, name in self.disk_migrations if label == app)
            attributes = {"operations": list(operations), "dependencies": [(app, newest)]}
            migration = type("Migration", (migrations.Migration,), attributes)
            self.disk_migrations[app, "9999_next"] = migration("9999_next", app)

        monkeypatch.setattr(MigrationLoader, "load_disk", load_disk)
        return [v.split(": ", 1)[1] for v in policy_violations() if "9999_next" in v]

    return check


def _fill_in(apps, schema_editor):
    """Fills the new column of the rows the old code wrote."""


ALLOWED = {
    "a nullable column": migrations.AddField("review", "client", models.CharField(null=True)),
    "a column with a database default": migrations.AddField(
        "review", "client", models.CharField(max_length=8, db_default="web")
    ),
    "a plain index": migrations.AddIndex(
        "review", models.Index(fields=["reviewed_at"], name="review_reviewed_at")
    ),
    "a new model": migrations.CreateModel(
        "Note", [("id", models.AutoField(primary_key=True)), ("text", models.TextField())]
    ),
    "a column made nullable": migrations.AlterField(
        "review", "reviewed_at", models.DateTimeField(null=True)
    ),
    "code with a reason": migrations.RunPython(_fill_in, migrations.RunPython.noop),
    "a constraint dropped": migrations.RemoveConstraint("review", "no_such_constraint"),
}


@pytest.mark.parametrize("kind", ALLOWED)
def test_the_policy_lets_an_expanding_migration_pass(next_migration, kind):
    assert next_migration(ALLOWED[kind]) == []


def test_the_policy_catches_a_new_column_with_only_a_python_default(next_migration):
    operation = migrations.AddField("review", "client", models.CharField(default="web"))
    assert next_migration(operation) == [
        "Add field client to review is NOT NULL without db_default"
    ]


def test_the_policy_catches_an_alter_field_that_drops_the_database_default(next_migration):
    """The operators' release 2: a column's `db_default` changed to a plain `default`."""
    dropped = migrations.AlterField(
        "review", "origin", models.CharField(max_length=8, default="answered")
    )
    assert next_migration(dropped) == [
        "Alter field origin on review drops the column's database default (the old code's "
        "inserts rely on it)"
    ]


def test_the_policy_catches_an_alter_field_that_makes_a_column_not_null(next_migration):
    tightened = migrations.AlterField("review", "duration_ms", models.PositiveIntegerField())
    assert next_migration(tightened) == [
        "Alter field duration_ms on review makes the column NOT NULL (the old code may write NULL)"
    ]


def test_the_policy_judges_an_alter_field_by_the_state_before_it(next_migration):
    """An AlterField that keeps what the column had is not flagged."""
    added = migrations.AddField("review", "client", models.CharField(null=True, db_default="w"))
    kept = migrations.AlterField("review", "client", models.CharField(null=True, db_default="w"))
    assert next_migration(added, kept) == []


def test_the_policy_catches_a_new_constraint(next_migration):
    constraint = models.CheckConstraint(
        condition=models.Q(round_step__gte=1), name="round_step_from_1"
    )
    assert next_migration(migrations.AddConstraint("review", constraint)) == [
        "Create constraint round_step_from_1 on model review adds a constraint (rows the old code "
        "writes may break it)"
    ]


def test_the_policy_catches_a_unique_constraint_and_a_field_made_unique(next_migration):
    constraint = models.UniqueConstraint(fields=["attempt"], name="review_attempt_once")
    unique = migrations.AlterField(
        "review", "attempt", models.CharField(max_length=64, unique=True)
    )
    assert next_migration(migrations.AddConstraint("review", constraint), unique) == [
        "Alter field attempt on review adds a unique constraint (rows the old code writes may "
        "break it)",
        "Create constraint review_attempt_once on model review adds a constraint (rows the old "
        "code writes may break it)",
    ]


@pytest.mark.parametrize(
    "operation",
    [
        migrations.RemoveField("review", "reviewed_at"),
        migrations.RenameField("review", "reviewed_at", "at"),
        migrations.DeleteModel("review"),
        migrations.RenameModel("review", "answer"),
        migrations.AlterModelTable("review", "practice_answer"),
    ],
    ids=lambda op: type(op).__name__,
)
def test_the_policy_catches_removals_and_renames(next_migration, operation):
    assert next_migration(operation) == [
        f"{operation.describe()} removes or renames what the old code uses"
    ]


def _no_reason(apps, schema_editor):
    pass


def test_the_policy_catches_code_and_sql_without_a_reason(next_migration):
    code = migrations.RunPython(_no_reason)
    sql = migrations.RunSQL("UPDATE practice_review SET round_step = round_step")
    assert next_migration(code, sql) == [
        "Raw Python operation runs code with no stated reason (a docstring on the function)",
        "Raw SQL operation runs SQL with no stated reason",
    ]


def test_a_listed_reason_lets_a_flagged_migration_pass(next_migration, monkeypatch):
    monkeypatch.setitem(REASONS, ("practice", "9999_next"), "the old code never reads it")
    assert next_migration(migrations.RemoveField("review", "reviewed_at")) == []


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
