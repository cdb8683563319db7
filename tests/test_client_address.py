"""Rate limits count a client by an address it cannot choose: the connection's, or the one the
proxies in TRUSTED_PROXIES report; an IPv6 client by its /64 (its /48 when guessing codes)."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import pytest
import time_machine

from lightmysky.ratelimit import Limit
from tests.test_limits import browser_at

NGINX = "127.0.0.1"  # trusted by default: nginx on this machine
BALANCER_NETWORK = "10.0.0.0/24"


@pytest.fixture(autouse=True)
def one_guess_per_address(settings):
    """Each new browser may guess a transfer code; each address (or /64) once an hour."""
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(100, 1, 3600)}
    with time_machine.travel(datetime(2026, 12, 1, 10, 0, tzinfo=UTC), tick=False):
        yield


def guess(peer: str, forwarded_for: str | None = None) -> int:
    """A new browser, connected from `peer`, guesses a transfer code: 400 (a wrong code) while its
    address has budget left, 429 once it is spent."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else {}
    return (
        browser_at(peer).post("/progress/adopt", {"code": "ABCD-EFGH"}, headers=headers).status_code
    )


def test_an_ipv6_client_guessing_codes_is_counted_by_its_48(db):
    """A /48 is free from a tunnel broker: counted by /64, it held 65,536 budgets of guesses."""
    assert guess("2001:db8:1:2::1") == 400
    assert guess("2001:db8:1:2:ffff:ffff:ffff:fffe") == 429
    assert guess("2001:db8:1:3::1") == 429  # another /64 of the same /48
    assert guess("2001:db8:2::1") == 400  # the next /48


def test_an_ipv6_client_is_otherwise_counted_by_its_64(db, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"import": Limit(100, 1, 3600)}

    def import_nothing(peer: str) -> int:
        return browser_at(peer).post("/progress/import").status_code  # 400: no file

    assert import_nothing("2001:db8:1:2::1") == 400
    assert import_nothing("2001:db8:1:2:ffff:ffff:ffff:fffe") == 429
    assert import_nothing("2001:db8:1:3::1") == 400  # the next /64: another subscriber


def test_an_ipv4_address_in_ipv6_dress_is_that_ipv4_address_alone(db):
    # A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d: not all in one /64.
    assert guess("::ffff:198.51.100.7") == 400
    assert guess("198.51.100.7") == 429
    assert guess("::ffff:198.51.100.8") == 400


@pytest.mark.parametrize(
    ("forwarded_for", "client"),
    [
        ("203.0.113.7", "203.0.113.7"),  # nginx appended the address it saw
        # What the client wrote itself, left of what nginx saw, proves nothing.
        ("127.0.0.1, 6.6.6.6, 203.0.113.7", "203.0.113.7"),
        # A load balancer in TRUSTED_PROXIES in front of nginx: nginx appended the balancer.
        ("6.6.6.6, 203.0.113.7, 10.0.0.2", "203.0.113.7"),
        # Two headers (gunicorn joins them with a comma): still read from the right.
        ("10.0.0.9,203.0.113.7,10.0.0.2", "203.0.113.7"),
        ("2001:db8:5:5::1, 10.0.0.2", "2001:db8:5:5::99"),
    ],
)
def test_behind_trusted_proxies_the_client_is_the_first_untrusted_address_from_the_right(
    db, settings, forwarded_for, client
):
    balancer = ipaddress.ip_network(BALANCER_NETWORK)
    settings.TRUSTED_PROXY_NETWORKS = [*settings.TRUSTED_PROXY_NETWORKS, balancer]
    assert guess(NGINX, forwarded_for) == 400
    # The same client (or its /64) connecting directly has nothing left.
    assert guess(client) == 429


def test_a_client_behind_an_untrusted_balancer_is_counted_as_the_balancer(db):
    # 10.0.0.2 is not in TRUSTED_PROXIES here: what it says about the client proves nothing.
    assert guess(NGINX, "203.0.113.7, 10.0.0.2") == 400
    assert guess(NGINX, "198.51.100.9, 10.0.0.2") == 429
    assert guess("10.0.0.2") == 429
    assert guess("203.0.113.7") == 400


@pytest.mark.parametrize(
    "forged",
    [
        "127.0.0.1",
        "203.0.113.99, ::1",
        "::1,127.0.0.1",  # as two headers
        "not-an-address",
        "",
    ],
)
def test_a_forged_header_from_an_untrusted_peer_changes_nothing(db, forged):
    # A client reaching gunicorn directly, with the header or without it, is its own address.
    assert guess("198.51.100.7") == 400
    assert guess("198.51.100.7", forged) == 429
    assert guess("198.51.100.7", "203.0.113.1") == 429


@pytest.mark.parametrize(
    "forwarded_for",
    ["not-an-address", "203.0.113.7, ", "203.0.113.7:443", "203.0.113.7,,", "9" * 5000, "[::1]"],
)
def test_garbage_where_a_proxy_writes_is_one_unknown_client_not_a_500(db, forwarded_for):
    # No trusted proxy writes it (nginx appends $remote_addr): all such requests share a budget.
    assert guess(NGINX, forwarded_for) == 400
    assert guess(NGINX, "unknown") == 429
    assert guess("203.0.113.7") == 400


def test_a_peer_that_is_no_address_is_not_a_500(db):
    assert [guess("", "203.0.113.7"), guess("garbage")] == [400, 429]


def test_a_local_process_without_the_header_is_itself(db):
    assert guess(NGINX) == 400
    assert guess(NGINX, "127.0.0.1") == 429  # a local request through nginx


def test_every_address_is_itself_when_no_proxy_is_trusted(db, settings):
    settings.TRUSTED_PROXY_NETWORKS = []
    assert guess(NGINX, "203.0.113.7") == 400
    assert guess(NGINX, "203.0.113.8") == 429
