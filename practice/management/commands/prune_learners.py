from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from practice.services import learners_prune


class Command(BaseCommand):
    help = (
        "Delete anonymous learners (their progress, reviews and rounds) idle for longer than "
        "LEARNER_IDLE_DAYS, and expired sessions. Run it daily."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--idle-days",
            type=int,
            default=settings.LEARNER_IDLE_DAYS,
            help="Remove learners idle for this many days (default: LEARNER_IDLE_DAYS).",
        )

    def handle(self, *args, **options):
        if options["idle_days"] < 1:
            raise CommandError("--idle-days must be at least 1: 0 would remove today's learners.")
        now = timezone.now()
        cutoff = now - timedelta(days=options["idle_days"])
        removed = learners_prune(idle_since=cutoff, now=now)
        self.stdout.write(f"Removed {removed} learner(s) idle since {cutoff:%Y-%m-%d}.")
