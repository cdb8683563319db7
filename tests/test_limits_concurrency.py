"""Truly concurrent requests on PostgreSQL: a rate limit holds however many arrive at once."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from django.test import Client
from django.utils.crypto import get_random_string

from lightmysky.ratelimit import Limit

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ATTEMPTS = 120
# PostgreSQL allows 100 connections by default, and other clients hold some: the threads all
# wait at one barrier, but at most this many hold a connection at the same moment.
CONNECTIONS = 60


def test_concurrent_attempts_from_one_address_never_exceed_its_budget(window_start, settings):
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"adopt": Limit(10, 30, 3600)}
    barrier = threading.Barrier(ATTEMPTS)
    connections = threading.BoundedSemaphore(CONNECTIONS)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def attempt() -> None:
        browser = Client(REMOTE_ADDR="198.51.100.7")
        browser.cookies["csrftoken"] = get_random_string(32)
        try:
            barrier.wait(timeout=30)
            with connections:
                try:
                    response = browser.post("/progress/adopt", {"code": "ABCD-EFGH"})
                finally:
                    connection.close()
            statuses.append(response.status_code)
        except Exception as error:  # surfaced by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=attempt) for _ in range(ATTEMPTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    # Every attempt is counted; the first 30 are looked up (400: no such code), the rest refused.
    assert Counter(statuses) == {400: 30, 429: ATTEMPTS - 30}


def test_counting_an_answer_waits_for_no_flush_of_the_log():
    """The counters' table is unlogged (migration lightmysky 0002): a counter's commit does
    not wait for the disk, so answers from one address do not queue on its flush."""
    from lightmysky.models import RateLimitCounter

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence FROM pg_class WHERE relname = %s",
            [RateLimitCounter._meta.db_table],
        )
        assert cursor.fetchone() == ("u",)
