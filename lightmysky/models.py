from __future__ import annotations

from django.db import models


class RateLimitCounter(models.Model):
    """Requests one client made in one window of one rate limit (see lightmysky/ratelimit.py).

    A table of its own, not the cache: a cache evicts entries when it is full, so a flood of new
    clients could reset the counters of a client that had reached its limit.
    """

    key = models.CharField(max_length=200)  # "<scope>:ip:<address>" or "<scope>:browser:<hash>"
    window_end = models.BigIntegerField(db_index=True)  # Unix time, in seconds
    count = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "window_end"], name="one_counter_per_window")
        ]

    def __str__(self) -> str:
        return f"{self.key} until {self.window_end}: {self.count}"
