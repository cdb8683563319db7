from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from lightmysky.ratelimit import counters_prune


class Command(BaseCommand):
    help = (
        "Delete rate-limit counters whose window has ended (they are kept in the database, "
        "one row per client and window). Run it daily, with prune_learners."
    )

    def handle(self, *args, **options):
        removed = counters_prune(now=time.time())
        self.stdout.write(f"Removed {removed} rate-limit counter(s) of ended windows.")
