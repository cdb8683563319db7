"""/metrics of a real gunicorn: one count for all its workers, kept through a reload."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from urllib.parse import urlsplit

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
        ok = 'lightmysky_probe_requests_total{path="/healthz",status="2xx"}'
        # Whichever worker answers, it reports all three: 30 and the start-up probe(s).
        seen = [values(get("/metrics"))[ok] for _ in range(6)]
        assert seen[0] >= 31, seen
        assert seen == sorted(seen)
        started[0].reload()  # a new master takes over; the old one's workers finish and exit
        get("/healthz")  # one more probe, counted by a new worker on top of the old ones' counts
        after_reload = values(get("/metrics"))[ok]
        assert after_reload >= seen[-1] + 1
        remote = urllib.request.Request(base + "/metrics", headers={"X-Forwarded-For": "1.2.3.4"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(remote, timeout=10)
        refused.value.close()
        assert refused.value.code == 404


def test_a_client_reaching_gunicorn_directly_cannot_choose_its_address(server_database):
    """The security review's N5 against a real gunicorn, which joins repeated headers: loopback
    is nginx (trusted), and another address on this machine stands for a client that reaches
    gunicorn without it."""

    def status(source: str, *forwarded_for: str) -> int:
        connection = http.client.HTTPConnection(host, port, timeout=10, source_address=(source, 0))
        try:
            connection.putrequest("GET", "/metrics")
            for value in forwarded_for:
                connection.putheader("X-Forwarded-For", value)
            connection.endheaders()
            return connection.getresponse().status
        finally:
            connection.close()

    with gunicorn(production_env(server_database), workers=1) as base:
        host, port = urlsplit(base).hostname, urlsplit(base).port
        assert status("127.0.0.1") == 200  # Prometheus on this machine
        assert status("127.0.0.1", "127.0.0.1, 198.51.100.7") == 404  # a visitor through nginx
        assert status("127.0.0.2") == 404
        assert status("127.0.0.2", "198.51.100.7, ::1") == 404
        assert status("127.0.0.2", "198.51.100.7", "127.0.0.1") == 404
        assert status("127.0.0.1", "198.51.100.7", "127.0.0.1") == 404
