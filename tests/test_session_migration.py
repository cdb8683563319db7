"""lightmysky.0004 drops the learner column the site's own session engine had added to Django's
session table (lightmysky.0003): learners keep their progress across the upgrade, and it can be
undone."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from tests.conftest import SEED_PATH
from tests.practice.helpers import answer, counter_text

pytestmark = pytest.mark.django_db(transaction=True)


def session_columns() -> set[str]:
    with connection.cursor() as cursor:
        description = connection.introspection.get_table_description(cursor, "django_session")
    return {column.name for column in description}


def test_learners_keep_their_sky_across_the_upgrade_and_back(demo):
    browser = Client()
    for right in (True, True, False):
        answer(browser, demo, right=right)
    before = browser.get(SEED_PATH).content.decode()
    assert counter_text(before) == "Your sky: 2 kindled"

    call_command("migrate", "lightmysky", "0003", verbosity=0)
    assert "learner_id" in session_columns()
    with connection.cursor() as cursor:  # as the session engine before the upgrade wrote it
        cursor.execute("UPDATE django_session SET learner_id = (SELECT id FROM practice_learner)")
    call_command("migrate", "lightmysky", verbosity=0)

    assert "learner_id" not in session_columns()
    after = browser.get(SEED_PATH).content.decode()
    assert counter_text(after) == "Your sky: 2 kindled"
    assert after.count('class="star ') == before.count('class="star ')
    assert "3 answers" in browser.get("/progress").content.decode()
