"""`make crash-check`: a PostgreSQL killed with `kill -9` under an answer load loses no
acknowledged answer.

How it shows it:

- It makes a PostgreSQL cluster of its own in a temporary folder under var/crash-check/ (the
  newest `initdb` in /usr/lib/postgresql/, run as the `postgres` user, since PostgreSQL refuses
  root), on a free port from 55432, with `fsync` and `synchronous_commit` on (the defaults, said
  out loud). It migrates the site's database there, loads the demo lessons and serves the site
  with gunicorn, in production mode, through tools/bench.py's `manage` and `gunicorn`.
- Then, CRASHES times: BROWSERS threads, each a browser with its own cookies (a learner of its
  own), answer the demo lessons' questions as a learner does without JavaScript: open the
  practice page, post the form's token and a choice, and move to the next lesson after a
  round's worth of answers. An answer is acknowledged when the site replies with the redirect to
  its feedback (302). After LOAD_SECONDS and a random part of a second, every process of the
  cluster is killed with SIGKILL at once while answers are in flight; the load stops (requests
  now fail, and count for nothing) and PostgreSQL starts again on the same data directory, which
  makes it recover from its write-ahead log. What the killed processes had handed to the kernel
  survives them; what they still held in their own memory (a commit not yet written out) does
  not, so an acknowledged answer is lost if its commit did not wait for its WAL to be flushed.
- After each restart, every answer acknowledged so far must be in `practice_review`: each is
  looked up by its attempt, which the form's signed token names (`round:<round key>:<step>`;
  the round key is derived from the browser's learner, so an attempt is one browser's alone).

It prints each crash's figures and a summary, and exits 1 if any acknowledged answer is missing
(or if a crash caught no answer, which would prove nothing). The cluster, gunicorn and every file
it made are removed on every way out, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType

import django
import psycopg
from django.core import signing

from tools.bench import ROOT, answer_body, gunicorn, manage
from tools.http_client import Browser

WORK = ROOT / "var" / "crash-check"
CRASHES = 3
BROWSERS = int(os.environ.get("CRASH_CHECK_BROWSERS", "16"))
WORKERS = 4
LOAD_SECONDS = 3.0
QUESTIONS_PER_ROUND = 8
FIRST_POSTGRES_PORT = 55432
FIRST_SITE_PORT = 58432


def free_port(first: int) -> int:
    """The first port from `first` that nothing listens on at 127.0.0.1."""
    for port in range(first, first + 1000):
        with socket.socket() as probe:
            # As servers bind: a port whose last connections are closing is free to them.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port from {first}")


def postgres_bin() -> Path:
    """The bin folder of the newest PostgreSQL installed from Debian's packages."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
    )
    if not found:
        raise SystemExit("no PostgreSQL in /usr/lib/postgresql/: apt-get install postgresql")
    return found[-1].parent


def become_subreaper() -> None:
    """Have the cluster's killed backends handed to this process, so it can reap them: here
    process 1 does not, and each would be left as a zombie."""
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def children_of(parent: int) -> list[int]:
    """The processes whose parent is `parent`, from /proc."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == parent:
            children.append(int(stat.parent.name))
    return children


def signal_all(pids: list[int], signum: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
            os.kill(pid, signum)


def gone(pid: int) -> bool:
    """Whether the process has ended; reaped here if it was handed to this process."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    stat = Path(f"/proc/{pid}/stat")
    try:
        text = stat.read_text()
    except OSError:
        return True
    return text[text.rindex(")") + 2] == "Z"  # a zombie that another process will reap


class Cluster:
    """A PostgreSQL cluster in `folder`, run as the `postgres` user: a postmaster, a child of
    this process, and the processes it forks (backends, writers, checkpointer)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.bin = postgres_bin()
        self.port = free_port(FIRST_POSTGRES_PORT)
        self.postmaster: subprocess.Popen[bytes] | None = None

    def url(self, database: str = "crash") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create(self) -> None:
        subprocess.run(
            [self.bin / "initdb", "-D", self.data, "--auth=trust", "-U", "postgres", "-E", "UTF8"],
            user="postgres",
            cwd=self.folder,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        self.start()
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute("CREATE DATABASE crash")

    def start(self) -> float:
        """Start the postmaster (recovering from a crash if there was one); the seconds it took
        to accept connections."""
        started = time.monotonic()
        with open(self.folder / "postgres.log", "ab") as log:
            self.postmaster = subprocess.Popen(
                [
                    self.bin / "postgres",
                    *("-D", str(self.data), "-p", str(self.port)),
                    *("-c", "listen_addresses=127.0.0.1"),
                    *("-c", f"unix_socket_directories={self.folder}"),
                    *("-c", "fsync=on", "-c", "synchronous_commit=on"),
                ],
                user="postgres",
                cwd=self.folder,
                start_new_session=True,  # out of reach of the terminal's Ctrl-C: `finally` kills it
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        while time.monotonic() - started < 60:
            if self.postmaster.poll() is not None:
                raise SystemExit(f"PostgreSQL did not start:\n{self.log_tail()}")
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=1).close()
                return time.monotonic() - started
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise SystemExit(f"PostgreSQL did not accept connections in 60 s:\n{self.log_tail()}")

    def crash(self) -> None:
        """SIGKILL to the postmaster and every process it forked, then wait until none is left.

        Each backend runs in a session of its own (PostgreSQL calls setsid), so no process
        group holds them all: they are found as the postmaster's children. The postmaster is
        stopped first, so that it forks none after they are listed, then all of them, so that
        they die at one instant: none of them writes anything after the moment of the crash."""
        assert self.postmaster is not None
        postmaster = self.postmaster.pid
        os.kill(postmaster, signal.SIGSTOP)
        cluster = [postmaster, *children_of(postmaster)]
        signal_all(cluster, signal.SIGSTOP)
        signal_all(cluster, signal.SIGKILL)
        self.postmaster.wait()
        self.postmaster = None
        deadline = time.monotonic() + 10
        while not all(gone(pid) for pid in cluster):
            if time.monotonic() > deadline:
                raise SystemExit("PostgreSQL's processes outlived SIGKILL for 10 s")
            time.sleep(0.02)

    def stop(self) -> None:
        """Gone, whatever its state: its files are removed next."""
        if self.postmaster is not None:
            self.crash()

    def log_tail(self) -> str:
        lines = (self.folder / "postgres.log").read_text(errors="replace").splitlines()
        return "\n".join(lines[-20:])


def attempt_of(token: str) -> str:
    """The attempt a practice form's token stands for, as its review stores it. The token is
    signed, not encrypted: its payload is readable without the site's secret."""
    from practice.submissions import round_attempt_key  # once Django is set up (`main`)

    payload = json.loads(signing.b64_decode(token.split(":", 1)[0].encode()))
    return round_attempt_key(payload["r"], payload["s"])


class AnswerLoad:
    """BROWSERS browsers answering as fast as the site lets them, until the `with` block ends."""

    def __init__(self, base: str, practice_paths: list[str]) -> None:
        self.base = base
        self.practice_paths = practice_paths
        self.acknowledged: list[str] = []  # attempts; list.append is atomic across threads
        self.failed: list[str] = []  # what each failed request got
        self.stopping = threading.Event()
        self.threads = [
            threading.Thread(target=self.browse, args=(n,), daemon=True) for n in range(BROWSERS)
        ]

    def __enter__(self) -> AnswerLoad:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join()

    def browse(self, n: int) -> None:
        browser = Browser()
        answered = 0
        while not self.stopping.is_set():
            lesson = (n + answered // QUESTIONS_PER_ROUND) % len(self.practice_paths)
            url = self.base + self.practice_paths[lesson]
            try:
                # A finished round's page starts the next one; ?new=1 is for a page with no form.
                body = answer_body(browser, url) or answer_body(browser, url + "?new=1")
                if body is None:
                    self.failed.append("a practice page without a question")
                    continue
                status, _, location = browser.fetch(url, body)
            except OSError as error:
                self.failed.append(type(error).__name__)
                continue
            if status == 302 and "answered=" in location:
                self.acknowledged.append(attempt_of(body["token"]))
                answered += 1
            else:
                self.failed.append(f"HTTP {status}")


def stored(database_url: str, attempts: list[str]) -> set[str]:
    """Which of these attempts the database holds a review of."""
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT attempt FROM practice_review WHERE attempt = ANY(%s)", [attempts]
        ).fetchall()
    return {attempt for (attempt,) in rows}


def site_env(cluster: Cluster, static_root: Path) -> dict[str, str]:
    """The site in production mode on the cluster (tools/bench.py's environment, with the
    site's own settings and URLs instead of the bench's)."""
    return {
        "DEBUG": "0",
        "SECRET_KEY": "crash-check-" + "k" * 50,
        "DATABASE_URL": cluster.url(),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": "http://127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "RATE_LIMIT_SCALE": "100000",
        "STATIC_ROOT": str(static_root),
        "DJANGO_SETTINGS_MODULE": "lightmysky.settings",
        "WEB_CONCURRENCY": str(WORKERS),
    }


def run(folder: Path, cluster: Cluster) -> int:
    print(
        f"PostgreSQL {cluster.bin.parent.name}: a cluster in {folder.relative_to(ROOT)}, port "
        f"{cluster.port}, fsync=on, synchronous_commit=on",
        flush=True,
    )
    cluster.create()
    environment = site_env(cluster, folder / "static")
    print("Migrating, loading the demo, collecting static files …", flush=True)
    manage("migrate", "--no-input", "-v0", extra_env=environment)
    manage("load_demo", extra_env=environment)
    manage("collectstatic", "--no-input", "-v0", extra_env=environment)
    printed = manage(
        "shell",
        "--no-imports",
        "-c",
        "import json; from lessons.models import Lesson; "
        "print(json.dumps([l.get_practice_url() for l in Lesson.objects.published()]))",
        extra_env=environment,
    )
    practice_paths: list[str] = json.loads(printed.strip().splitlines()[-1])
    port = free_port(FIRST_SITE_PORT)
    server = gunicorn(port, extra_env=environment)
    try:
        print(
            f"gunicorn: {WORKERS} workers on port {port}; {BROWSERS} browsers answer in "
            f"{len(practice_paths)} lessons; {CRASHES} crashes",
            flush=True,
        )
        acknowledged: list[str] = []
        lost: set[str] = set()
        for crash in range(1, CRASHES + 1):
            load_seconds = LOAD_SECONDS + random.random()
            with AnswerLoad(f"http://127.0.0.1:{port}", practice_paths) as load:
                time.sleep(load_seconds)
                cluster.crash()
                at_kill = len(load.acknowledged)
            recovery_seconds = cluster.start()
            acknowledged += load.acknowledged
            missing = set(acknowledged) - stored(cluster.url(), acknowledged)
            print(
                f"crash {crash}: kill -9 after {load_seconds:.1f} s of load; "
                f"{len(load.acknowledged)} answers acknowledged "
                f"({len(load.acknowledged) - at_kill} of them after the kill), "
                f"{len(load.failed)} requests failed; recovered in {recovery_seconds:.1f} s; "
                f"lost: {len(missing - lost)} (all crashes so far: {len(missing)} of "
                f"{len(acknowledged)})",
                flush=True,
            )
            lost |= missing
            if not load.acknowledged:
                print("  no answer was acknowledged: this crash proves nothing", flush=True)
                return 1
    finally:
        server.terminate()
        server.wait()
    found = len(set(acknowledged)) - len(lost)
    print(
        f"\nanswers acknowledged: {len(acknowledged)}, found after the crashes: {found}, "
        f"lost: {len(lost)}"
    )
    if lost:
        print(
            f"FAILED: {len(lost)} acknowledged answers are not in the database, e.g. "
            f"{sorted(lost)[:3]}"
        )
        return 1
    print("OK: every acknowledged answer survived kill -9 of PostgreSQL")
    return 0


def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # so that the `finally` blocks clean up


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lightmysky.settings")
    os.environ.setdefault("DEBUG", "1")
    django.setup()  # for the site's own attempt keys (`attempt_of`)
    if os.geteuid() != 0:
        raise SystemExit("crash-check runs PostgreSQL as the postgres user: run it as root")
    started = time.monotonic()
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    become_subreaper()
    WORK.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="run-", dir=WORK))
    postgres = pwd.getpwnam("postgres")
    os.chown(folder, postgres.pw_uid, postgres.pw_gid)
    cluster = Cluster(folder)
    try:
        return run(folder, cluster)
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            WORK.rmdir()  # unless something else is in it
        print(
            f"(cluster, gunicorn and files removed; the check took "
            f"{time.monotonic() - started:.0f} s)"
        )


if __name__ == "__main__":
    sys.exit(main())
