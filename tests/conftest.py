from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from lessons.models import Lesson

SEED_ID = "mt__e-JwIxHek"
SEED_PATH = (
    "/learn/computing/training-across-many-devices-data-model-and-pipeline-parallelism-"
    + SEED_ID
)


@pytest.fixture
def demo(db) -> Lesson:
    """The demo content, loaded as `make setup` loads it; returns the seed lesson."""
    call_command("load_demo", stdout=io.StringIO())
    return Lesson.objects.get(public_id=SEED_ID)
