"""One log line per request, with the request id a proxy passes in."""

from __future__ import annotations

import logging
import re


def request_records(caplog):
    return [r for r in caplog.records if r.name == "lightmysky.requests"]


def test_the_request_line_carries_the_proxys_request_id(client, db, caplog):
    caplog.set_level(logging.INFO, logger="lightmysky.requests")
    client.get("/healthz", headers={"X-Request-ID": "5f0c8a2b" * 4})
    (record,) = request_records(caplog)
    assert (record.method, record.path, record.status) == ("GET", "/healthz", 200)
    assert record.request_id == "5f0c8a2b" * 4


def test_a_request_id_that_is_not_an_id_is_replaced_by_one_of_our_own(client, db, caplog):
    caplog.set_level(logging.INFO, logger="lightmysky.requests")
    client.get("/healthz", headers={"X-Request-ID": "x\n{forged}"})
    client.get("/healthz")
    first, second = request_records(caplog)
    assert re.fullmatch(r"[0-9a-f]{32}", first.request_id), first.request_id
    assert re.fullmatch(r"[0-9a-f]{32}", second.request_id)
    assert first.request_id != second.request_id
