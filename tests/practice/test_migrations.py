"""Data migrations carry learners' answers over: no answer changes meaning on an upgrade."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("lessons", "0009_question_keep_choice_order"), ("practice", "0005_round_question_order")]
AFTER = [("lessons", "0010_choice_ids"), ("practice", "0006_review_answer_choice_ids")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_answers_stored_as_letters_become_the_identities_of_the_same_choices():
    apps = migrate(BEFORE)
    subject = apps.get_model("lessons", "Subject").objects.create(slug="s", name="S")
    area = apps.get_model("lessons", "Area").objects.create(subject=subject, slug="a", name="A")
    lesson = apps.get_model("lessons", "Lesson").objects.create(
        public_id="migr8test01", slug="m", title="M", subject=subject, area=area,
        age_from=10, age_to=99, created_at=timezone.now(), updated_at=timezone.now(),
    )  # fmt: skip
    choices = [{"text": t, "correct": t == "two", "explanation": ""} for t in ("one", "two", "six")]
    question = apps.get_model("lessons", "Question").objects.create(
        lesson=lesson, position=1, key="q1", prompt="?", choices=choices
    )
    learner = apps.get_model("practice", "Learner").objects.create(public_id="l1")
    now = timezone.now()
    for attempt, answer in (("a1", "B"), ("a2", "A,C"), ("a3", "")):
        apps.get_model("practice", "Review").objects.create(
            learner=learner, lesson=lesson, question=question, attempt=attempt, rating=3,
            reviewed_at=now, answer=answer,
        )  # fmt: skip

    apps = migrate(AFTER)
    stored = apps.get_model("lessons", "Question").objects.get(pk=question.pk).choices
    ids = {choice["text"]: choice["id"] for choice in stored}
    assert len(set(ids.values())) == 3
    answers = dict(apps.get_model("practice", "Review").objects.values_list("attempt", "answer"))
    assert answers == {"a1": ids["two"], "a2": ",".join(sorted([ids["one"], ids["six"]])), "a3": ""}

    apps = migrate(BEFORE)  # and back
    answers = dict(apps.get_model("practice", "Review").objects.values_list("attempt", "answer"))
    assert answers == {"a1": "B", "a2": "A,C", "a3": ""}
    migrate(migrate_to_latest())


def migrate_to_latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db
def test_the_tables_every_answer_writes_keep_no_index_another_one_begins_with():
    """Each index is written on every answer: one whose columns begin another index's serves no
    lookup the longer one does not, on either database (practice 0009 dropped five)."""
    redundant = []
    with connection.cursor() as cursor:
        for table in ("practice_memory", "practice_review", "practice_round"):
            indexes = {
                name: tuple(found["columns"])
                for name, found in connection.introspection.get_constraints(cursor, table).items()
                if found["index"] and not found["unique"] and not found["primary_key"]
            }
            every = [
                tuple(found["columns"])
                for found in connection.introspection.get_constraints(cursor, table).values()
                if found["index"] or found["unique"]
            ]
            redundant += [
                name
                for name, columns in indexes.items()
                if any(
                    len(other) > len(columns) and other[: len(columns)] == columns
                    for other in every
                )
            ]
    assert redundant == []
