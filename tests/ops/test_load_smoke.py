"""Load smoke: 64 concurrent connections for 10 seconds at the lesson page and the practice POST.

Loopback only, bounded in time, and it stops by itself. Figures are printed, not judged: the
test asserts only that nothing failed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from tests.conftest import SEED_PATH
from tests.ops.servers import deploy, gunicorn, production_env
from tools.http_client import Browser, answer_form

CONNECTIONS = 64
SECONDS = 10


@pytest.mark.slow
def test_64_connections_for_10_seconds_get_no_errors(server_database):
    env = production_env(server_database, RATE_LIMIT_SCALE="1000")
    deploy(env)
    statuses: Counter[str] = Counter()
    lock = threading.Lock()
    with gunicorn(env, workers=4) as base:
        stop_at = time.monotonic() + SECONDS

        def connection() -> None:
            browser = Browser()
            while time.monotonic() < stop_at:
                try:
                    status, _ = browser.request(base + SEED_PATH)
                    results = [("lesson", status)]
                    status, html = browser.request(base + SEED_PATH + "/practice")
                    form = answer_form(html)
                    if form:
                        token, letter = form
                        status, _ = browser.request(
                            base + SEED_PATH + "/practice",
                            {
                                "csrfmiddlewaretoken": browser.csrf(),
                                "token": token,
                                "choice": letter,
                            },
                        )
                        results.append(("answer", status))
                    else:
                        browser = Browser()  # round finished: a new visitor
                except OSError as error:
                    results = [("error", type(error).__name__)]
                with lock:
                    statuses.update(f"{kind} {code}" for kind, code in results)

        threads = [threading.Thread(target=connection) for _ in range(CONNECTIONS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=SECONDS + 60)
    print(f"\nload smoke over {SECONDS}s with {CONNECTIONS} connections:", dict(statuses))
    assert not any(key.startswith("error") for key in statuses), statuses
    assert not any(key.split()[1].startswith("5") for key in statuses), statuses
    assert statuses["lesson 200"] > CONNECTIONS and statuses["answer 302"] > CONNECTIONS
