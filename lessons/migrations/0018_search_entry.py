import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

FTS_SQLITE = [
    # External content: the text lives once, in lessons_searchentry; these triggers keep the
    # FTS5 index in step with every insert, update and delete of an entry.
    """CREATE VIRTUAL TABLE lessons_search_fts USING fts5(
        title, summary, body, questions,
        content='lessons_searchentry', content_rowid='lesson_id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER lessons_search_fts_insert AFTER INSERT ON lessons_searchentry BEGIN
        INSERT INTO lessons_search_fts(rowid, title, summary, body, questions)
        VALUES (new.lesson_id, new.title, new.summary, new.body, new.questions);
    END""",
    """CREATE TRIGGER lessons_search_fts_delete AFTER DELETE ON lessons_searchentry BEGIN
        INSERT INTO lessons_search_fts(lessons_search_fts, rowid, title, summary, body, questions)
        VALUES ('delete', old.lesson_id, old.title, old.summary, old.body, old.questions);
    END""",
    """CREATE TRIGGER lessons_search_fts_update AFTER UPDATE ON lessons_searchentry BEGIN
        INSERT INTO lessons_search_fts(lessons_search_fts, rowid, title, summary, body, questions)
        VALUES ('delete', old.lesson_id, old.title, old.summary, old.body, old.questions);
        INSERT INTO lessons_search_fts(rowid, title, summary, body, questions)
        VALUES (new.lesson_id, new.title, new.summary, new.body, new.questions);
    END""",
]
FTS_SQLITE_UNDO = [
    "DROP TRIGGER IF EXISTS lessons_search_fts_update",
    "DROP TRIGGER IF EXISTS lessons_search_fts_delete",
    "DROP TRIGGER IF EXISTS lessons_search_fts_insert",
    "DROP TABLE IF EXISTS lessons_search_fts",
]
POSTGRES = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS lessons_searchentry_vector ON lessons_searchentry USING gin (vector)",
]
POSTGRES_UNDO = ["DROP INDEX IF EXISTS lessons_searchentry_vector"]


def create_engine_index(apps, schema_editor):
    """Each database's own search machinery, which Django's models cannot declare for one
    vendor only: on SQLite an FTS5 table over the entries (kept by triggers); on PostgreSQL a
    GIN index on the vector and pg_trgm for "did you mean" (IF NOT EXISTS: an operator may
    have created it as a superuser already)."""
    vendor = schema_editor.connection.vendor
    for statement in {"sqlite": FTS_SQLITE, "postgresql": POSTGRES}.get(vendor, []):
        schema_editor.execute(statement)


def drop_engine_index(apps, schema_editor):
    """Undo: the extension stays, as other things may use it."""
    vendor = schema_editor.connection.vendor
    for statement in {"sqlite": FTS_SQLITE_UNDO, "postgresql": POSTGRES_UNDO}.get(vendor, []):
        schema_editor.execute(statement)


def index_published_lessons(apps, schema_editor):
    """Fill the new index with the lessons already published, so search finds them from the
    first request after `migrate`; later changes reach it through lessons.signals."""
    from lessons import search

    Lesson = apps.get_model("lessons", "Lesson")
    Question = apps.get_model("lessons", "Question")
    SearchEntry = apps.get_model("lessons", "SearchEntry")
    lessons = list(Lesson.objects.filter(status="published"))
    questions = search._questions_by_lesson(Question, [lesson.pk for lesson in lessons])
    for start in range(0, len(lessons), 500):
        search.write_entries(SearchEntry, lessons[start : start + 500], questions)


class Migration(migrations.Migration):
    """Full-text search of published lessons: one entry per published lesson, read
    by each database's own engine (lessons/search.py)."""

    dependencies = [
        ("lessons", "0017_flashcard_positions_distinct"),
    ]

    operations = [
        migrations.CreateModel(
            name="SearchEntry",
            fields=[
                (
                    "lesson",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="search_entry",
                        serialize=False,
                        to="lessons.lesson",
                    ),
                ),
                ("title", models.TextField()),
                ("summary", models.TextField()),
                ("body", models.TextField()),
                ("questions", models.TextField()),
                ("vector", django.contrib.postgres.search.SearchVectorField(null=True)),
            ],
        ),
        migrations.RunPython(create_engine_index, drop_engine_index),
        migrations.RunPython(index_published_lessons, migrations.RunPython.noop),
    ]
