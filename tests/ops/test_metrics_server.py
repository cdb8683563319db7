"""/metrics of a real gunicorn: one count for all its workers, kept through a reload."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.ops.servers import gunicorn, production_env
from tests.test_metrics import values


def test_gunicorn_reports_every_worker_and_keeps_counts_through_a_reload(server_database):
    env = production_env(server_database)
    started = []
    with gunicorn(env, workers=3, started=started) as base:

        def get(path: str) -> str:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                return response.read().decode()

        for _ in range(30):
            get("/healthz")
        ok = 'lightmysky_http_requests_total{status="2xx"}'
        # Whichever worker answers, it reports all three: 30 and the start-up probe(s).
        seen = [values(get("/metrics"))[ok] for _ in range(6)]
        assert seen[0] >= 31, seen
        assert seen == sorted(seen)
        started[0].reload()  # a new master takes over; the old one's workers finish and exit
        after_reload = values(get("/metrics"))[ok]
        assert after_reload >= seen[-1] + 1
        remote = urllib.request.Request(base + "/metrics", headers={"X-Forwarded-For": "1.2.3.4"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(remote, timeout=10)
        refused.value.close()
        assert refused.value.code == 404
