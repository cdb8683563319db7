from __future__ import annotations

import io
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from practice.models import Learner, Memory, Review
from tests.practice.helpers import answer


def test_idle_learners_are_removed_with_their_progress_and_active_ones_kept(demo):
    old_browser, new_browser = Client(), Client()
    answer(old_browser, demo, right=True)
    with time_machine.travel(timezone.now() + timedelta(days=300), tick=False):
        answer(new_browser, demo, right=True)
    with time_machine.travel(timezone.now() + timedelta(days=420), tick=False):
        out = io.StringIO()
        call_command("prune_learners", stdout=out)
    assert "Removed 1 learner(s)" in out.getvalue()
    assert Learner.objects.count() == 1
    assert Review.objects.count() == Memory.objects.count() == 1


def test_the_idle_time_can_be_given(demo):
    answer(Client(), demo, right=True)
    with time_machine.travel(timezone.now() + timedelta(days=31), tick=False):
        call_command("prune_learners", "--idle-days", "30", stdout=io.StringIO())
    assert Learner.objects.count() == 0


def test_prune_refuses_zero_idle_days(db):
    with pytest.raises(CommandError, match="at least 1"):
        call_command("prune_learners", "--idle-days", "0", stdout=io.StringIO())
