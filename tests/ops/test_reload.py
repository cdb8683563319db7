"""`systemctl reload` (gunicorn USR2: a new master on the new code takes over), the documented
upgrade, loses no answer under load, and neither does a migration that follows the policy, run
while the old code serves.

A restart refuses answers while no server listens; a reload must refuse none. Loopback only,
bounded in time, and it stops by itself.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from pathlib import Path

from lightmysky.lib.envfile import read_environment_file
from tests.conftest import SEED_PATH
from tests.ops.servers import ROOT, SECRET, children, deploy, gunicorn, manage, production_env
from tools.http_client import Browser, answer_form

LEARNERS = 8
# The event comes once the learners have answered this many times (the servers are warm), and
# the load goes on this many seconds after it.
ANSWERS_BEFORE = 2 * LEARNERS
SECONDS_AFTER = 6


def answers_under_load(base: str, event) -> tuple[Counter[str], list, float]:
    """LEARNERS answering, with event() called once they are under way: the statuses seen, when
    each answer was accepted, and when the event started."""
    statuses: Counter[str] = Counter()
    answered_at: list[float] = []
    lock = threading.Lock()
    stop = threading.Event()

    def learner() -> None:
        browser = Browser()
        while not stop.is_set():
            try:
                status, html = browser.request(base + SEED_PATH + "/practice")
                results = [f"page {status}"]
                if form := answer_form(html):
                    token, letter = form
                    data = {"csrfmiddlewaretoken": browser.csrf(), "token": token}
                    status, _ = browser.request(
                        base + SEED_PATH + "/practice", data | {"choice": letter}
                    )
                    results.append(f"answer {status}")
                    if status == 302:
                        answered_at.append(time.monotonic())
                else:
                    browser = Browser()  # round finished: a new visitor
            except Exception as error:  # noqa: BLE001 (any failure is counted, not lost)
                results = [f"error {type(error).__name__}: {error}"]
            with lock:
                statuses.update(results)

    threads = [threading.Thread(target=learner) for _ in range(LEARNERS)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(answered_at) < ANSWERS_BEFORE and time.monotonic() < deadline:
        time.sleep(0.1)
    event_at = time.monotonic()
    try:
        event()
        time.sleep(SECONDS_AFTER)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    return statuses, answered_at, event_at


def assert_nothing_failed_or_lost(env, statuses, answered_at, event_at, *, root=ROOT) -> None:
    assert set(statuses) <= {"page 200", "answer 302"}, statuses
    assert sum(t < event_at for t in answered_at) >= ANSWERS_BEFORE, statuses
    assert sum(t > event_at + 1 for t in answered_at) >= LEARNERS // 2, statuses
    code = "from practice.models import Review; print('REVIEWS', Review.objects.count())"
    reviews = int(manage(env, "shell", "--no-imports", "-c", code, root=root).split("REVIEWS")[1])
    assert reviews == statuses["answer 302"], (reviews, statuses)


def test_answers_under_load_through_a_reload_get_no_error_and_none_is_lost(server_database):
    env = production_env(server_database, RATE_LIMIT_SCALE="1000")
    deploy(env)
    started: list = []
    with gunicorn(env, workers=2, started=started) as base:
        result = answers_under_load(base, lambda: started[0].reload())
    print(f"\nanswers through a reload, {LEARNERS} learners:", dict(result[0]))
    assert_nothing_failed_or_lost(env, *result)


# The next release, as the policy writes it: a new column with a database default.
NEW_FIELD = '    client = models.CharField(max_length=8, default="web", db_default="web")\n'


def test_answers_under_load_through_migrate_then_reload_of_a_new_column(server_database, tmp_path):
    """docs/deploy.md's upgrade: the next release's migration runs while the old code serves,
    then a reload starts the new code; no answer fails or is lost on the way."""
    root, next_release = tmp_path / "app", tmp_path / "next"
    for folder in (root, next_release):
        shutil.copytree(ROOT, folder, ignore=shutil.ignore_patterns(*COPY_IGNORED))
    env = production_env(server_database, RATE_LIMIT_SCALE="1000")
    deploy(env, root=root)
    # The next release: the new field and the migration that makemigrations writes for it.
    models_py = next_release / "practice" / "models.py"
    text = models_py.read_text()
    anchor = text.index("class Review(LearnerItem):\n")
    docstring_end = text.index('"""\n', anchor + len("class Review(LearnerItem):\n") + 8) + 4
    models_py.write_text(text[:docstring_end] + NEW_FIELD + text[docstring_end:])
    manage(env, "makemigrations", "practice", "--name", "review_client", "-v0", root=next_release)
    (migration,) = (next_release / "practice" / "migrations").glob("*_review_client.py")

    def upgrade() -> None:
        # git pull, migrate while the old code serves, then reload.
        shutil.copy(models_py, root / "practice" / "models.py")
        shutil.copy(migration, root / "practice" / "migrations" / migration.name)
        manage(env, "migrate", "--no-input", "-v0", root=root)
        time.sleep(1)  # the old code answers on the migrated database for a while
        started[0].reload()

    started: list = []
    with gunicorn(env, workers=2, started=started, root=root) as base:
        result = answers_under_load(base, upgrade)
    print(f"\nanswers through migrate + reload, {LEARNERS} learners:", dict(result[0]))
    assert_nothing_failed_or_lost(env, *result, root=root)
    code = (
        "from practice.models import Review; "
        "print('CLIENTS', sorted(set(Review.objects.values_list('client', flat=True))))"
    )
    assert "CLIENTS ['web']" in manage(env, "shell", "--no-imports", "-c", code, root=root)


COPY_IGNORED = (".venv", ".git", "var", "staticfiles", "media", "*.sqlite3*")


def test_a_reload_reads_the_environment_file_again_with_no_answer_refused(
    server_database, tmp_path
):
    """A key rotation and a changed setting take `systemctl reload`, not a restart: gunicorn
    reads ENVIRONMENT_FILE again, no answer fails or is lost, and the site runs on the new
    values. The rotation is docs/deploy.md's two reloads: the new key first only accepted, then
    used (a form signed with a key that a worker still serving does not know is refused); a
    third reload, with the old key taken out of the file, leaves it out of the site."""
    env = production_env(server_database, RATE_LIMIT_SCALE="1000")
    deploy(env)
    env_file = tmp_path / "lightmysky.env"
    leftover = "an-earlier-rotations-key-" + "z" * 40
    env_file.write_text(
        f"SECRET_KEY={SECRET}\nSECRET_KEY_FALLBACKS={leftover}\nSITE_URL=http://127.0.0.1\n"
    )
    new_key = "rotated-secret-key-" + "y" * 40

    def rotate() -> None:
        env_file.write_text(
            f"SECRET_KEY={SECRET}\nSECRET_KEY_FALLBACKS={new_key}\nSITE_URL=http://127.0.0.1\n"
        )
        started[0].reload()
        env_file.write_text(
            f"SECRET_KEY={new_key}\nSECRET_KEY_FALLBACKS={SECRET}\nSITE_URL=http://localhost\n"
        )
        started[0].reload()

    started: list = []
    # As systemd starts the service: the file's variables in the first master's environment.
    service_env = env | read_environment_file(env_file) | {"ENVIRONMENT_FILE": str(env_file)}
    with gunicorn(service_env, started=started) as base:
        status, before = Browser().request(base + "/")
        result = answers_under_load(base, rotate)
        status, after = Browser().request(base + "/")
        env_file.write_text(f"SECRET_KEY={new_key}\nSITE_URL=http://localhost\nWEB_CONCURRENCY=3\n")
        started[0].reload()
        master = started[0].pid()
        master_env = Path(f"/proc/{master}/environ").read_bytes().split(b"\0")
        workers = children(master)
    assert '<link rel="canonical" href="http://127.0.0.1/">' in before
    assert '<link rel="canonical" href="http://localhost/">' in after
    assert not [line for line in master_env if line.startswith(b"SECRET_KEY_FALLBACKS=")]
    assert len(workers) == 3  # gunicorn's own settings come from the file as it is now, too
    assert_nothing_failed_or_lost(env, *result)


def test_readyz_tells_a_reload_that_took_over_from_one_that_failed(server_database, tmp_path):
    """The operators' walk of 2026-12-06: a reload whose new master could not start (a comment
    after SECRET_KEY in the environment file) left /readyz naming the same release, so the
    upgrade's wait passed while the old code and settings went on serving."""
    import json
    import os
    import signal
    import urllib.request

    env = production_env(server_database)
    deploy(env)
    env_file = tmp_path / "lightmysky.env"
    env_file.write_text(f"SECRET_KEY={SECRET}\n")
    started: list = []
    service_env = env | read_environment_file(env_file) | {"ENVIRONMENT_FILE": str(env_file)}

    def started_at(base: str) -> str:
        with urllib.request.urlopen(base + "/readyz", timeout=10) as response:
            return json.load(response)["started_at"]

    with gunicorn(service_env, started=started) as base:
        first = started_at(base)
        time.sleep(1.1)  # the moment is to the second
        env_file.write_text(f"SECRET_KEY={SECRET} # rotated today\n")
        old = started[0].pid()
        workers = set(children(old))
        os.kill(old, signal.SIGUSR2)  # the new master refuses the key, and exits
        deadline = time.monotonic() + 60
        seen_new_master = False
        while not seen_new_master or set(children(old)) != workers:
            seen_new_master |= bool(set(children(old)) - workers)
            assert time.monotonic() < deadline, "the failed reload did not end"
            time.sleep(0.05)
        assert started_at(base) == first
        env_file.write_text(f"SECRET_KEY={SECRET}\n")
        started[0].reload()
        assert started_at(base) > first
