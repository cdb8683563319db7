"""`make upgrade-check`: upgrades under an answer load refuse and lose no answer, and a reload
does not stall answers.

Two runs, each on a PostgreSQL database of its own (created on DATABASE_URL's server, by default
postgres@127.0.0.1:5432, and dropped at the end), with LEARNERS learners answering the demo
lessons as a browser without JavaScript does (GET the practice page, POST its token and a
choice; an answer is acknowledged by the redirect to its feedback):

- **reload**: one gunicorn of 5 workers, sent what `systemctl reload` sends (USR2, as
  docs/deploy.md's unit does). It reports the longest time without an acknowledged answer
  during the reload beside the longest before it, and fails if the reload's exceeds
  MAX_RELOAD_STALL.
- **phased**: docs/deploy.md's upgrade of several app servers, with two: A and B serve this
  checkout (copies of it) while the learners' requests go to either at random. The next release
  is made on the spot: this checkout with a migration of each kind the policy allows (a nullable
  column, a column with a database default and an index, a new model, a widened column, and
  RunPython with a stated reason), which must pass tests/test_migration_policy.py. Then, as the
  doc says: the new code is put in both trees and `collectstatic` run in each, `migrate` runs
  once, from A, while both still serve the old code; A is reloaded, then B, each once the one
  before reports the new release in /readyz.

Each run fails if any request got anything but a page (200) or an acknowledged answer (302),
or if the database holds another number of answers than were acknowledged (lost or doubled).

`load BASE HOST CAFILE STOP_FILE` is the load alone, for .ci/deploy-check: learners answering
the site at BASE over TLS (with the self-signed certificate in CAFILE, as visitors of HOST)
until STOP_FILE exists, at a pace under the answer limits; it prints what they saw as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

from lightmysky.release import release
from tools.http_client import Browser, answer_form
from tools.http_client import _NoRedirect as NoRedirect
from tools.scratch import free_port, postgres_database

ROOT = Path(__file__).resolve().parent.parent
GUNICORN = Path(sys.executable).with_name("gunicorn")
LESSONS = [
    "/learn/computing/training-across-many-devices-data-model-and-pipeline-parallelism-"
    "mt__e-JwIxHek",
    "/learn/computing/message-passing-and-asynchronous-work-mt_twcpO-945r",
]
LEARNERS = 8
# Seconds without an acknowledged answer that a reload may cause. Measured on a 2-core machine
# shared with other work (load average 10 to 14): 0.5 to 1.5 s, against 3.6 to 3.8 s for HUP
# without preloading, which this must stay clear of.
MAX_RELOAD_STALL = 2.0
COPY_IGNORED = (".venv", ".git", "var", "staticfiles", "media", "*.sqlite3*", "__pycache__")

# The next release's models: two columns and a model more, and a wider answer column.
NEXT_REVIEW_FIELDS = (
    '    client = models.CharField(max_length=8, default="web", db_default="web")\n'
    "    device = models.CharField(max_length=40, null=True, blank=True, db_index=True)\n"
)
NEXT_MODEL = '''

class AnswerNote(models.Model):
    """A note on an answer (the next release's new model)."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE)
    text = models.TextField()
'''
NEXT_DATA_MIGRATION = '''from django.db import migrations


def name_the_devices_of_earlier_answers(apps, schema_editor):
    """Answers given before the column existed say so; the old code leaves it NULL."""
    apps.get_model("practice", "Review").objects.filter(device=None).update(device="earlier")


class Migration(migrations.Migration):
    dependencies = [("practice", "{previous}")]
    operations = [
        migrations.RunPython(name_the_devices_of_earlier_answers, migrations.RunPython.noop)
    ]
'''


def say(message: str) -> None:
    print(f"[upgrade-check] {message}", flush=True)


@contextlib.contextmanager
def scratch_database() -> Iterator[str]:
    base = urlsplit(os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres")
    if base.scheme not in {"postgres", "postgresql"}:
        base = urlsplit("postgres://postgres@127.0.0.1:5432/postgres")
    with postgres_database(base.geturl(), f"lightmysky_upgrade_{os.getpid()}") as url:
        yield url


def site_env(database_url: str, static_root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    return env | {
        "DEBUG": "0",
        "SECRET_KEY": "upgrade-check-" + "k" * 50,
        "DATABASE_URL": database_url,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": "http://127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "STATIC_ROOT": str(static_root),
        "RATE_LIMIT_SCALE": "100000",
        "LOG_LEVEL": "WARNING",
    }


def manage(root: Path, env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True, text=True
    )
    if result.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} in {root}:\n{result.stderr}")
    return result.stdout


class Server:
    """A gunicorn serving the tree at `root`; its master's pid is read from its pid file, since
    a reload by USR2 hands the server to a new master."""

    def __init__(self, root: Path, env: dict[str, str], workers: int) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.pid_file = root / "var" / "gunicorn.pid"
        self.pid_file.parent.mkdir(exist_ok=True)
        self.log = open(root / "var" / "gunicorn.log", "ab")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [str(GUNICORN), "-c", "gunicorn.conf.py", "-p", str(self.pid_file), "lightmysky.wsgi"],
            cwd=root,
            env=env | {"BIND": f"127.0.0.1:{self.port}", "WEB_CONCURRENCY": str(workers)},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for(lambda: self.release() is not None, f"gunicorn in {root} to start")

    def master(self) -> int:
        return int(self.pid_file.read_text())

    def release(self) -> str | None:
        """The release /readyz reports, or None while nothing answers."""
        try:
            with urllib.request.urlopen(self.base + "/readyz", timeout=2) as response:
                return json.load(response).get("release", "")
        except OSError:
            return None

    def takes_up(self, version: str) -> bool:
        return self.release() == version

    def reload(self) -> None:
        # What docs/deploy.md's unit sends on `systemctl reload` (ExecReload=kill -s USR2 …).
        os.kill(self.master(), signal.SIGUSR2)

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            os.kill(self.master(), signal.SIGTERM)
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=30)
        self.log.close()


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"waited {seconds} s for {what}")
        time.sleep(0.1)


class SiteBrowser(Browser):
    """A browser of the site at https://HOST, its requests sent to another address (nginx's)."""

    def __init__(self, host: str, cafile: str) -> None:
        super().__init__()
        context = ssl.create_default_context(cafile=cafile)
        context.check_hostname = False  # the address is 127.0.0.1; the certificate is HOST's
        site = {"Host": host, "Origin": f"https://{host}"}

        class SiteHandler(urllib.request.HTTPSHandler):
            def https_request(self, request):
                for name, value in site.items():
                    request.add_unredirected_header(name, value)
                return super().https_request(request)

        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies),
            NoRedirect,
            SiteHandler(context=context),
        )


class Load:
    """LEARNERS learners answering, each request sent to one of `bases` at random, each
    thinking `think` seconds before an answer."""

    def __init__(
        self, bases: list[str], think: float = 0, browser: Callable[[], Browser] = Browser
    ) -> None:
        self.bases = bases
        self.think = think
        self.browser = browser
        self.statuses: Counter[str] = Counter()
        self.answered_at: list[float] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.learner) for _ in range(LEARNERS)]

    def learner(self) -> None:
        browser = self.browser()
        while not self.stopping.is_set():
            lesson = random.choice(LESSONS)
            try:
                status, html = browser.request(random.choice(self.bases) + lesson + "/practice")
                seen = [f"page {status}"]
                if form := answer_form(html):
                    token, choice = form
                    data = {"csrfmiddlewaretoken": browser.csrf(), "token": token, "choice": choice}
                    time.sleep(self.think)
                    status, _ = browser.request(
                        random.choice(self.bases) + lesson + "/practice", data
                    )
                    seen.append(f"answer {status}")
                    if status == 302:
                        with self.lock:
                            self.answered_at.append(time.monotonic())
                elif status == 200:
                    browser = self.browser()  # a round finished: a new visitor
            except OSError as error:
                seen = [f"error {type(error).__name__}"]
            with self.lock:
                self.statuses.update(seen)

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        try:
            wait_for(lambda: len(self.answered_at) >= 2 * LEARNERS, "the first answers")
        except SystemExit:
            self.__exit__()
            raise SystemExit(f"no answers: {dict(self.statuses)}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def refused(self) -> int:
        return sum(n for kind, n in self.statuses.items() if kind not in {"page 200", "answer 302"})

    def longest_gap(self, start: float, end: float) -> float:
        times = sorted(t for t in self.answered_at if start <= t <= end)
        return max((b - a for a, b in zip([start, *times], [*times, end], strict=True)), default=0)


def stored_answers(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        (count,) = connection.execute("SELECT count(*) FROM practice_review").fetchall()[0]
        return count


def copy_tree(target: Path) -> Path:
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*COPY_IGNORED))
    return target


def deploy(root: Path, env: dict[str, str]) -> None:
    manage(root, env, "migrate", "--no-input", "-v0")
    manage(root, env, "collectstatic", "--no-input", "-v0")
    manage(root, env, "load_demo", "--if-empty")


def check_load(load: Load, database_url: str) -> dict:
    acknowledged, stored = load.statuses["answer 302"], stored_answers(database_url)
    figures = {
        "statuses": dict(load.statuses),
        "acknowledged": acknowledged,
        "stored": stored,
        "refused": load.refused(),
    }
    if figures["refused"] or stored != acknowledged:
        raise SystemExit(f"refused or lost answers: {figures}")
    return figures


def reload_run(work: Path) -> dict:
    root = copy_tree(work / "app")
    with scratch_database() as database_url:
        env = site_env(database_url, work / "static")
        deploy(root, env)
        server = Server(root, env, workers=5)
        try:
            with Load([server.base]) as load:
                time.sleep(3)
                before_end = time.monotonic()
                old_master = server.master()
                server.reload()
                wait_for(
                    lambda: server.pid_file.exists() and server.master() != old_master,
                    "the new master",
                )
                time.sleep(4)
                end = time.monotonic()
            before = load.longest_gap(before_end - 3, before_end)
            during = load.longest_gap(before_end, end)
            figures = check_load(load, database_url)
        finally:
            server.stop()
    figures |= {"longest_gap_before_s": round(before, 2), "longest_gap_reload_s": round(during, 2)}
    say(f"reload: {figures}")
    if during > MAX_RELOAD_STALL:
        raise SystemExit(f"the reload stalled answers for {during:.2f} s")
    return figures


def make_next_release(next_root: Path, env: dict[str, str]) -> str:
    """Changes the tree at `next_root` into the next release; returns its version."""
    models_py = next_root / "practice" / "models.py"
    text = models_py.read_text()
    anchor = text.index("class Review(LearnerItem):\n")
    fields_at = text.index("\n\n", text.index("    Kind = AnswerKind", anchor)) + 2
    text = text[:fields_at] + NEXT_REVIEW_FIELDS + text[fields_at:]
    text = text.replace(
        "    answer = models.CharField(max_length=32, blank=True)",
        "    answer = models.CharField(max_length=64, blank=True)",
    )
    models_py.write_text(text + NEXT_MODEL)
    manage(next_root, env, "makemigrations", "practice", "--name", "next_release", "-v0")
    migrations = next_root / "practice" / "migrations"
    (schema,) = migrations.glob("*_next_release.py")
    number = int(schema.name[:4]) + 1
    data = migrations / f"{number:04d}_next_release_data.py"
    data.write_text(NEXT_DATA_MIGRATION.format(previous=schema.stem))
    pyproject = next_root / "pyproject.toml"
    version = release() + "+next"
    pyproject.write_text(
        re.sub(
            r'^version = ".*"', f'version = "{version}"', pyproject.read_text(), count=1, flags=re.M
        )
    )
    policy = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_migration_policy.py::test_migrations_keep_the_previous_release_working",
        ],
        cwd=next_root,
        env=env
        | {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{next_root / 'var' / 'policy.sqlite3'}"},
        capture_output=True,
        text=True,
    )
    if policy.returncode:
        raise SystemExit(f"the next release's migrations break the policy:\n{policy.stdout}")
    say(f"next release {version}: {schema.name} and {data.name}, which pass the policy")
    return version


def pull(next_root: Path, server_root: Path) -> None:
    """What `git pull` brings to a server's tree: the next release's changed files."""
    for relative in ("practice/models.py", "pyproject.toml"):
        shutil.copy(next_root / relative, server_root / relative)
    for migration in (next_root / "practice" / "migrations").glob("*_next_release*.py"):
        shutil.copy(migration, server_root / "practice" / "migrations" / migration.name)


def phased_run(work: Path) -> dict:
    roots = {name: copy_tree(work / name) for name in ("a", "b")}
    next_root = copy_tree(work / "next")
    with scratch_database() as database_url:
        envs = {name: site_env(database_url, work / f"static-{name}") for name in roots}
        deploy(roots["a"], envs["a"])
        manage(roots["b"], envs["b"], "collectstatic", "--no-input", "-v0")
        (next_root / "var").mkdir(exist_ok=True)
        version = make_next_release(next_root, envs["a"])
        servers = {name: Server(roots[name], envs[name], workers=2) for name in roots}
        try:
            with Load([s.base for s in servers.values()]) as load:
                time.sleep(2)
                for name, root in roots.items():
                    pull(next_root, root)
                    manage(root, envs[name], "collectstatic", "--no-input", "-v0")
                say(manage(roots["a"], envs["a"], "migrate", "--no-input").strip().splitlines()[-1])
                time.sleep(2)  # the old code serves on the migrated database
                for name, server in servers.items():
                    server.reload()
                    wait_for(partial(server.takes_up, version), f"{name} on {version}")
                    say(f"server {name} reloaded onto {version}")
                time.sleep(3)
            figures = check_load(load, database_url)
        finally:
            for server in servers.values():
                server.stop()
    say(f"phased upgrade of two servers: {figures}")
    return figures


def load_until(base: str, host: str, cafile: str, stop_file: str) -> None:
    # The answer limit is 60 a minute per browser: 1.5 s of thought keeps each well under it.
    load = Load([base], think=1.5, browser=partial(SiteBrowser, host, cafile))
    with load:
        print(f"{LEARNERS} learners answering {base} as {host}", file=sys.stderr, flush=True)
        wait_for(Path(stop_file).exists, stop_file, seconds=1800)
    figures = {
        "statuses": dict(load.statuses),
        "acknowledged": load.statuses["answer 302"],
        "refused": load.refused(),
        "longest_gap_s": round(load.longest_gap(min(load.answered_at), max(load.answered_at)), 2),
    }
    print(json.dumps(figures))


def main() -> None:
    if sys.argv[1:2] == ["load"]:
        load_until(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", default=["reload", "phased"])
    runs = parser.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="upgrade-check-", dir=ROOT / "var"))
    try:
        for run in runs:
            {"reload": reload_run, "phased": phased_run}[run](work / run)
    finally:
        if not os.environ.get("UPGRADE_CHECK_KEEP"):
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
