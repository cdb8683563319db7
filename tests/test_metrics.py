"""/metrics: Prometheus counters for the operator's addresses only, whole-server counts."""

from __future__ import annotations

import ipaddress
import re

import pytest
from django.test import Client

from lightmysky.ratelimit import Limit
from tests.practice.helpers import current_question, practice_url


def values(text: str) -> dict[str, float]:
    """{'name{labels}': value} of a Prometheus text exposition."""
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            found[series] = float(value)
    return found


@pytest.fixture
def own_counts(settings, tmp_path):
    """Counts of this test alone, in a folder as under gunicorn."""
    settings.METRICS_DIR = str(tmp_path / "metrics")
    (tmp_path / "metrics").mkdir()


def scrape(client: Client) -> dict[str, float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return values(response.content.decode())


def test_metrics_answer_loopback_and_count_requests(client, db, own_counts):
    client.get("/robots.txt")
    client.get("/no-such-page")
    counts = scrape(client)
    assert counts['lightmysky_http_requests_total{status="2xx"}'] == 1
    assert counts['lightmysky_http_requests_total{status="4xx"}'] == 1
    assert counts["lightmysky_http_request_duration_seconds_count"] == 2
    assert counts['lightmysky_http_request_duration_seconds_bucket{le="+Inf"}'] == 2
    assert counts["lightmysky_database_errors_total"] == 0
    assert counts["lightmysky_cache_errors_total"] == 0


def test_probes_are_counted_apart_from_pages(client, db, own_counts, settings):
    # A failing /readyz (here: SITE_URL's host refused) is not a failing page: an alert on the
    # pages' 5xx rate must not fire because a balancer probes a node that is out.
    settings.ALLOWED_HOSTS = ["other.example.org"]
    for _ in range(3):
        assert client.get("/readyz").status_code == 503
    client.get("/healthz")
    client.get("/metrics")
    counts = scrape(client)
    assert counts['lightmysky_probe_requests_total{path="/readyz",status="5xx"}'] == 3
    assert counts['lightmysky_probe_requests_total{path="/healthz",status="2xx"}'] == 1
    assert counts['lightmysky_probe_requests_total{path="/metrics",status="2xx"}'] == 1
    assert counts['lightmysky_http_requests_total{status="5xx"}'] == 0
    assert counts['lightmysky_http_requests_total{status="2xx"}'] == 0
    assert counts["lightmysky_http_request_duration_seconds_count"] == 0


@pytest.mark.parametrize(
    ("address", "forwarded_for"),
    [
        ("203.0.113.7", None),  # another machine
        ("127.0.0.1", "203.0.113.7"),  # a visitor through nginx, as nginx reports them
        ("127.0.0.1", "::1, 203.0.113.7"),  # the same, who wrote a loopback address first
        ("127.0.0.1", "garbage"),
        ("127.0.0.1", "127.0.0.1, garbage"),
        # A client reaching gunicorn directly cannot choose its address.
        ("198.51.100.7", "127.0.0.1"),
        ("198.51.100.7", "198.51.100.8, ::1"),
        ("198.51.100.7", "198.51.100.8,127.0.0.1"),  # as two headers
    ],
)
def test_metrics_are_404_for_other_addresses(db, address, forwarded_for):
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    response = Client(REMOTE_ADDR=address).get("/metrics", headers=headers)
    assert response.status_code == 404
    assert b"lightmysky_" not in response.content


def test_metrics_answer_the_networks_the_operator_allows(db, settings):
    settings.METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/8")]
    assert Client(REMOTE_ADDR="10.20.30.40").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 404
    through_nginx = Client(REMOTE_ADDR="127.0.0.1").get(
        "/metrics", headers={"X-Forwarded-For": "10.9.9.9"}
    )
    assert through_nginx.status_code == 200


def test_metrics_refuse_what_a_proxy_left_out_of_trusted_proxies_forwards(db, settings):
    # A balancer at 10.0.0.2, in the allowed network but not trusted: each visitor behind it
    # would otherwise be judged as the balancer.
    settings.METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/8")]
    balancer = Client(REMOTE_ADDR="10.0.0.2")
    assert balancer.get("/metrics", headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 404
    assert balancer.get("/metrics").status_code == 200


def test_metrics_answer_before_host_validation_and_the_https_redirect(db, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["lightmysky.example.org"]
    response = Client(SERVER_NAME="127.0.0.1").get("/metrics")
    assert response.status_code == 200


def test_answers_and_rate_limit_refusals_are_counted(
    window_start, client, demo, settings, own_counts, django_capture_on_commit_callbacks
):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"answer": Limit(2, 50, 60)}
    before = scrape(client)
    assert before["lightmysky_answers_recorded_total"] == 0
    statuses = []
    for _ in range(3):
        question, token = current_question(client, practice_url(demo))
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                practice_url(demo), {"token": token, "choice": sorted(question.correct_ids)}
            )
        statuses.append(response.status_code)
    assert statuses == [302, 302, 429]
    after = scrape(client)
    assert after["lightmysky_answers_recorded_total"] == 2
    assert after['lightmysky_rate_limit_refusals_total{scope="answer"}'] == 1
    assert after['lightmysky_rate_limit_refusals_total{scope="report"}'] == 0
    assert after['lightmysky_http_requests_total{status="4xx"}'] == 1


def test_a_resent_answer_is_not_counted_twice(
    client, demo, own_counts, django_capture_on_commit_callbacks
):
    question, token = current_question(client, practice_url(demo))
    form = {"token": token, "choice": sorted(question.correct_ids)}
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(practice_url(demo), form).status_code == 302
        assert client.post(practice_url(demo), form).status_code == 302
    assert scrape(client)["lightmysky_answers_recorded_total"] == 1


def test_metrics_names_follow_prometheus_rules(client, db, own_counts):
    text = client.get("/metrics").content.decode()
    for line in text.splitlines():
        if not line.startswith("#"):
            assert re.fullmatch(
                r'[a-z_]+(\{[a-z]+="[^"]*"(,[a-z]+="[^"]*")*\})? [0-9.e+-]+', line
            ), line
