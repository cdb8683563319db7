"""Two app servers, one PostgreSQL: a learner alternating between them keeps one progress."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import SEED_PATH
from tests.ops.servers import deploy, gunicorn, manage, production_env
from tools.http_client import Browser, answer_form

pytestmark = pytest.mark.postgres


def test_one_learner_alternating_between_two_servers_keeps_one_progress(server_database):
    env = production_env(server_database, CACHE_URL="db://")
    deploy(env)
    manage(env, "createcachetable")
    with gunicorn(env) as first, gunicorn(env) as second:
        browser = Browser()
        servers = [first, second]
        answered = 0
        for turn in range(40):
            server = servers[turn % 2]
            status, html = browser.request(server + SEED_PATH + "/practice")
            assert status == 200
            form = answer_form(html)
            if form is None:
                break
            token, letter = form
            other = servers[(turn + 1) % 2]  # post to the other server than the one that served
            status, _, location = browser.fetch(
                other + SEED_PATH + "/practice",
                {"csrfmiddlewaretoken": browser.csrf(), "token": token, "choice": letter},
            )
            assert status == 302, f"turn {turn}: {status}"
            answered += 1
            status, feedback = browser.request(server + location.split("#")[0])
            assert status == 200
            if "See your results" in feedback:
                break
        assert answered >= 8
        status, summary = browser.request(first + SEED_PATH + "/practice?summary=1")
        assert "Round complete" in summary
        status, body = browser.request(second + "/progress/export")
        items = json.loads(body)["items"]
        reviews = sum(len(item["reviews"]) for item in items)
        assert reviews == answered, "a review was lost or doubled"
        assert len({item["item"] for item in items}) == 8
        assert re.search(r"\d+ lit", browser.request(first + "/sky")[1])
