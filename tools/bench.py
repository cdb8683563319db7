"""`make bench`: one table of speed and size figures, all measured in one run on loopback.

It builds its own data, once in a SQLite database under var/bench/ and once on PostgreSQL
(BENCH_DATABASE_URL, by default the local server's lightmysky_bench database when it answers;
BENCH_DATABASE_URL= with nothing skips it): a catalogue of 1,250 lessons from tools/catalogue.py,
and learners with 0 to 10,000 reviewed items or 20 lessons started. It serves each with gunicorn
(one sync worker a core, or BENCH_WORKERS) under its own settings and
URLs (tools/bench_settings.py: the site's, plus a page without the database) and loads it with
wrk from Debian's packages; answers, which each need a fresh form, are fetched first by a small
Python client and then sent by wrk. Every endpoint is measured in turn, then again, for
BENCH_ROUNDS rounds (3) of BENCH_SECONDS (3 s), and each ratio is read round by round. On
PostgreSQL the answers are also sent to two servers at once. Before each endpoint it times a
fixed piece of Python, to show how steady the machine's CPU was. It prints figures and ratios
side by side, then says which budget each database met;
docs/performance.md names the budgets it checks them against.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "var" / "bench"
SECONDS = int(os.environ.get("BENCH_SECONDS", "3"))
# Each endpoint is measured once a round, the rounds one after another, so every ratio can be
# read round by round from figures taken seconds apart; the machine's speed drifts more between
# the first row and the last of one pass than within a round.
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CROWD = 400  # learners besides the measured ones (`build_data`), each with three lessons begun
CONNECTIONS = 16
# One sync worker a core. Production's default (gunicorn.conf.py: two a core and one more) was
# tried: on this 2-core machine it made no figure better and every figure noisier.
WORKERS = int(os.environ.get("BENCH_WORKERS") or (os.cpu_count() or 1))
SEED = (
    "/learn/computing/training-across-many-devices-data-model-and-pipeline-parallelism-"
    "mt__e-JwIxHek"
)

WRK_REPORT = """
done = function(summary, latency, requests)
  io.write(string.format("RESULT %f %f %f %d %d\\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout,
    summary.requests))
end
"""


BENCH_CSRF_SECRET = "b" * 32  # a CSRF cookie's secret: 32 letters or digits

SQLITE_URL = f"sqlite:///{WORK / 'bench.sqlite3'}"
LOCAL_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/lightmysky_bench"
database_url = SQLITE_URL  # the database being measured


def postgres_url() -> str | None:
    """BENCH_DATABASE_URL, or the local PostgreSQL if it answers; None for none ("" skips)."""
    url = os.environ.get("BENCH_DATABASE_URL")
    if url is not None:
        return url or None
    import psycopg

    try:
        psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", connect_timeout=2).close()
    except psycopg.Error:
        return None
    return LOCAL_POSTGRES_URL


def server_and_name(url: str) -> tuple[str, str]:
    """A PostgreSQL URL's server (as the URL of its `postgres` database) and database name."""
    return url.rsplit("/", 1)[0] + "/postgres", url.rsplit("/", 1)[1].split("?")[0]


def recreate_postgres(url: str) -> None:
    """An empty database of this URL's name, on its server."""
    import psycopg
    from psycopg import sql

    server, name = server_and_name(url)
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def env() -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DEBUG"}},
        "DEBUG": "0",
        "SECRET_KEY": "bench-" + "k" * 50,
        "DATABASE_URL": database_url,
        "ALLOWED_HOSTS": "127.0.0.1,testserver",
        "SITE_URL": "http://127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "STATIC_ROOT": str(WORK / "static"),
        "RATE_LIMIT_SCALE": "100000",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "tools.bench_settings",
    }


def manage(*args: str, root: Path = ROOT, extra_env: dict[str, str] | None = None) -> str:
    """A management command of the checkout at `root`, with the bench's environment and
    `extra_env`; its output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=root,
        env=env() | (extra_env or {}),
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise SystemExit(result.stderr)
    return result.stdout


def prepare() -> dict:
    """Migrate, collect static files, load the demo and the large data; return what to measure."""
    if database_url == SQLITE_URL:
        shutil.rmtree(WORK, ignore_errors=True)
        WORK.mkdir(parents=True)
    else:
        recreate_postgres(database_url)
    manage("migrate", "--no-input", "-v0")
    manage("collectstatic", "--no-input", "-v0")
    manage("load_demo")
    out = manage("shell", "--no-imports", "-c", "from tools.bench import build_data; build_data()")
    return json.loads(out.strip().splitlines()[-1])


def analyze() -> None:
    """On PostgreSQL, what autovacuum does for the planner on a running server once a table
    has grown by a tenth: fresh statistics. The bench's own answers grow the learners' tables
    thirtyfold (1,400 rounds when the data is built, some 40,000 by the end), and a server with
    autovacuum off (as CI's is) would plan every later read with the small tables' statistics:
    the answer's read of its round once went through every round of its lesson that way."""
    if database_url == SQLITE_URL:
        return  # SQLite keeps no statistics until ANALYZE runs, which nothing here does
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("ANALYZE")


def build_data() -> None:
    """Runs inside Django: 1,250 lessons (10,000 stars), the learners to measure and `CROWD`
    others."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import resolve
    from django.utils import timezone

    from lessons.models import ContentVersion, Question
    from practice import scheduling, services
    from practice.models import Learner
    from tools import catalogue

    def catalogue_questions(items: int) -> list[Question]:
        return list(
            Question.objects.filter(lesson__public_id__startswith="mt_cat").order_by("pk")[:items]
        )

    def make_learner(items: int) -> str:
        learner = catalogue.learner_with(catalogue_questions(items), timezone.now())
        return catalogue.session_of(learner)

    def client_of(session_key: str | None) -> Client:
        client = Client()
        if session_key:
            client.cookies["sessionid"] = session_key
        return client

    def sky_ms(session_key: str | None) -> float:
        client = client_of(session_key)
        client.get("/sky")  # warm the map
        times = []
        for _ in range(5):
            started = time.perf_counter()
            client.get("/sky")
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)

    def compressed(session_key: str | None, path: str) -> int:
        return len(gzip.compress(client_of(session_key).get(path).content))

    def queries(session_key: str | None) -> dict[str, int]:
        counts = {}
        client = client_of(session_key)
        for name, path in (
            ("lesson", SEED),
            ("practice", SEED + "/practice"),
            ("sky", "/sky"),
            ("review", "/review"),
            ("search", SEARCH_BROAD_PATH),
        ):
            client.get(path)  # warm
            with CaptureQueriesContext(connection) as captured:
                client.get(path)
            counts[name] = len(captured)
        return counts

    lessons = catalogue.add_lessons(125)  # 1,000 stars
    learner_1k = make_learner(1000)
    sky_1k = sky_ms(learner_1k)
    lessons += catalogue.add_lessons(1125, offset=125)  # 10,000 stars in all
    learner_10k = make_learner(10_000)
    sky_10k = sky_ms(learner_10k)
    learner_100 = make_learner(100)
    seed_questions = list(
        Question.objects.filter(lesson__public_id=resolve(SEED).kwargs["public_id"]).order_by(
            "position"
        )
    )
    assert seed_questions, "the bench's lesson has no questions"
    learner_started = catalogue.session_of(
        catalogue.learner_with(catalogue_questions(100) + seed_questions, timezone.now())
    )
    learner_0 = make_learner(0)
    # Two lessons started in each of the ten subjects.
    learner_20 = catalogue.session_of(catalogue.learner_of_lessons(lessons[:20], timezone.now()))

    # One answer, from service call to stored review, split into the scheduler and the rest.
    learner = Learner.objects.create()
    questions = list(Question.objects.filter(lesson__in=lessons[-300:]).order_by("pk")[:300])
    started = time.perf_counter()
    for n, question in enumerate(questions):
        services.question_answer(
            learner=learner,
            question=question,
            grade=question.grade(["c1"]),
            attempt=f"cost-{n}",
            duration_ms=None,
            now=timezone.now(),
        )
    total_ms = (time.perf_counter() - started) * 1000 / len(questions)
    now = timezone.now()
    started = time.perf_counter()
    for _ in questions:
        scheduling.review(None, scheduling.GOOD, now)
    scheduler_ms = (time.perf_counter() - started) * 1000 / len(questions)

    # The site's other learners, each with three lessons begun. With only the few measured
    # here, PostgreSQL's statistics knew every learner, and took one it had not seen (each round's
    # answering learners) to have one memory: the answer's read of its memory then tied the
    # learner's other indexes with the unique one, and read all the learner's memories.
    everyone = catalogue_questions(10_000)
    questions_of_three_lessons = 3 * catalogue.QUESTIONS
    for n in range(CROWD):
        start = n * questions_of_three_lessons % (len(everyone) - questions_of_three_lessons)
        catalogue.learner_with(everyone[start : start + questions_of_three_lessons], now)

    if connection.vendor == "postgresql":
        # What a server that has run for a while has done since the bulk inserts: autovacuum
        # gathered the planner's statistics and marked the pages all-visible (for index-only
        # scans), and a checkpoint wrote them out. Measured straight after the inserts instead,
        # every PostgreSQL page cost more CPU, the answer most.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
            cursor.execute("CHECKPOINT")  # a superuser's, or pg_checkpoint's (PostgreSQL 15)

    # The cost of a statement on this machine, round trip included. It differs between machines,
    # and the ratios of pages that send more statements than the visitor's page depend on it.
    statements = 2000
    with connection.cursor() as cursor:
        started, cpu_started = time.perf_counter(), time.process_time()
        for _ in range(statements):
            cursor.execute("SELECT 1")
            cursor.fetchall()
        statement_us = {
            "wall": (time.perf_counter() - started) * 1e6 / statements,
            "cpu": (time.process_time() - cpu_started) * 1e6 / statements,
        }

    print(
        json.dumps(
            {
                "sessions": {
                    "learner": learner_100,
                    "learner_20": learner_20,
                    "learner_started": learner_started,
                },
                "practice_paths": [lesson.get_absolute_url() + "/practice" for lesson in lessons],
                "queries": {
                    "visitor without a session": queries(None),
                    "learner with 0 items": queries(learner_0),
                    "learner with 100 items": queries(learner_100),
                    "learner with 10000 items": queries(learner_10k),
                    "learner with 20 lessons": queries(learner_20),
                    "learner who started the lesson": queries(learner_started),
                },
                "sky_ms": {
                    "1000": sky_1k,
                    "10000": sky_10k,
                    "20 lessons": sky_ms(learner_20),
                    "new browser": sky_ms(None),
                },
                "sky_bytes": {
                    "20 lessons": compressed(learner_20, "/sky"),
                    "new browser": compressed(None, "/sky"),
                    "table": compressed(learner_20, "/sky/table?subject=catalogue-0"),
                },
                "answer_ms": {"total": total_ms, "scheduler": scheduler_ms},
                "search_bytes": len(client_of(learner_100).get(SEARCH_BROAD_PATH).content),
                "statement_us": statement_us,
                "version": ContentVersion.for_request(),
            }
        )
    )


def gunicorn(
    port: int, *, root: Path = ROOT, extra_env: dict[str, str] | None = None
) -> subprocess.Popen:
    """The site served from the checkout at `root`, with the bench's environment and
    `extra_env`, once it answers."""
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "-c",
            "gunicorn.conf.py",
            "lightmysky.wsgi",
        ],
        cwd=root,
        env=env()
        | {"BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(WORKERS)}
        | (extra_env or {}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).close()
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("gunicorn did not start")


SERVER_PROCESSES = ("gunicorn", "postgres")


def process_cpu() -> dict[int, tuple[str, float]]:
    """The name and the CPU seconds used so far of every gunicorn and PostgreSQL process on
    this machine (their workers and backends), by process id, from /proc."""
    processes = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        if name.startswith(SERVER_PROCESSES):
            fields = text[text.rindex(")") + 2 :].split()
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
            processes[int(stat.parent.name)] = (name, ticks / os.sysconf("SC_CLK_TCK"))
    return processes


def cpu_between(
    before: dict[int, tuple[str, float]],
    after: dict[int, tuple[str, float]],
    kinds: tuple[str, ...] = SERVER_PROCESSES,
) -> float:
    """CPU seconds the processes whose names start with one of `kinds` used between two
    `process_cpu` readings. A process there only at the second counts whole; one that ended
    in between (a database connection closed just before the load) counts nothing, where
    subtracting two totals would have taken its whole life away from the load's figure."""
    return sum(
        seconds - before.get(pid, (name, 0.0))[1]
        for pid, (name, seconds) in after.items()
        if name.startswith(kinds)
    )


def wrk_figures(output: str) -> dict:
    """wrk's RESULT line (see WRK_REPORT)."""
    line = next(line for line in output.splitlines() if line.startswith("RESULT"))
    rps, p50, p95, errors, count = line.split()[1:]
    return {
        "rps": float(rps),
        "p50": float(p50),
        "p95": float(p95),
        "errors": int(errors),
        "sent": int(count),
    }


def cpu_figures(before: dict, after: dict, sent: int) -> dict:
    """The CPU a request took between two `process_cpu` readings, in ms: in gunicorn's and
    PostgreSQL's processes together (`cpu_ms`), and in each apart."""

    def per_request(kinds: tuple[str, ...]) -> float:
        return cpu_between(before, after, kinds) * 1000 / max(1, sent)

    return {
        "cpu_ms": per_request(SERVER_PROCESSES),
        "server_ms": per_request(("gunicorn",)),
        "database_ms": per_request(("postgres",)),
    }


def wrk(url: str, cookie: str | None = None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_REPORT)
    command = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "-s", script.name, url]
    if cookie:
        # A learner's browser also sends the CSRF cookie its first form set; without it every
        # page would mint a new secret and set the cookie again, which no browser asks for.
        command[1:1] = ["-H", f"Cookie: sessionid={cookie}; csrftoken={BENCH_CSRF_SECRET}"]
    cpu_before = process_cpu()
    output = subprocess.run(command, capture_output=True, text=True).stdout
    cpu_after = process_cpu()
    os.unlink(script.name)
    figures = wrk_figures(output)
    return figures | cpu_figures(cpu_before, cpu_after, figures["sent"])


def answer_body(browser, url: str) -> dict | None:
    """The form data answering the question the practice page at `url` shows, or None."""
    from tools.http_client import answer_form

    form = answer_form(browser.request(url)[1])
    if form is None:
        return None
    return {"csrfmiddlewaretoken": browser.csrf(), "token": form[0], "choice": form[1]}


def answer_forms(
    practice_paths: list[str], base: str, per_learner: int, *, second: bool = False
) -> list[str]:
    """POSTs ready to send, each a round's first answer (the heaviest: the round, the review
    and the memory written), or with `second` its second (the review and the memory), from
    `learners` browsers that each fetched their questions first.

    Each browser first answers one question untimed (that makes its learner), then fetches the
    first question of its share of the lessons (with `second`, answers it untimed and fetches
    the second); the POSTs are returned as the raw requests wrk sends, with the browser's
    cookies, so only the answers are timed."""
    from urllib.parse import urlencode

    from tools.http_client import Browser

    if per_learner >= len(practice_paths):  # a learner's answers, each in a lesson of its own
        raise SystemExit(
            f"{per_learner} answers a learner need more than the {len(practice_paths)} lessons: "
            "set a smaller BENCH_ROUNDS"
        )
    learners = CONNECTIONS
    prepared: list[list[str]] = [[] for _ in range(learners)]

    def learner(n: int) -> None:
        browser = Browser()
        # The learners' shares overlap: each lesson is answered by several learners, each once.
        start = n * len(practice_paths) // learners
        for index in range(start, start + per_learner + 1):
            path = practice_paths[index % len(practice_paths)]
            body = answer_body(browser, base + path)
            if body is None:
                continue
            if not any(cookie.name == "sessionid" for cookie in browser.cookies):
                browser.request(base + path, body)  # the first answer makes the learner
                continue
            if second:
                browser.request(base + path, body)
                body = answer_body(browser, base + path)
                if body is None:
                    continue
            cookies = "; ".join(f"{c.name}={c.value}" for c in browser.cookies)
            prepared[n].append(
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookies}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(urlencode(body))}\r\n\r\n{urlencode(body)}"
            )

    threads = [threading.Thread(target=learner, args=(n,)) for n in range(learners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Interleaved, so the learners' answers arrive mixed as from a classroom.
    return [request for batch in itertools.zip_longest(*prepared) for request in batch if request]


ANSWERS_SCRIPT = """
local answers = {%s}
local index = 0
function setup(thread)
  thread:set("first", threads_set or 0)
  threads_set = (threads_set or 0) + 1
end
function init(args)
  index = first - 1
end
function request()  -- the two threads take every other answer
  index = index + 2
  return answers[(index %% #answers) + 1]
end
"""


def answer_load(requests: list[str], *bases: str) -> dict:
    """wrk sending the prepared answers, each once (two threads, taking every other one), to
    each server in `bases` at once; the figures are summed over the servers."""
    results = []
    processes = []
    cpu_before = process_cpu()
    for index, base in enumerate(bases):
        share = requests[index :: len(bases)]
        script = ANSWERS_SCRIPT % ",".join(json.dumps(request) for request in share)
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
            file.write(script + WRK_REPORT)
        command = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "-s", file.name, base]
        processes.append(
            (file.name, len(share), subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        )
    outputs = [
        (name, available, process.communicate()[0]) for name, available, process in processes
    ]
    cpu_after = process_cpu()
    for name, available, output in outputs:
        os.unlink(name)
        results.append(wrk_figures(output) | {"available": available})
    sent = sum(r["sent"] for r in results)
    return {
        "rps": sum(r["rps"] for r in results),
        "p50": max(r["p50"] for r in results),
        "p95": max(r["p95"] for r in results),
        "errors": sum(r["errors"] for r in results),
        "sent": sent,
        # More sent than prepared means some answers went twice (cheaper: already recorded).
        "repeated": sum(max(0, r["sent"] - r["available"]) for r in results),
    } | cpu_figures(cpu_before, cpu_after, sent)


def summary(samples: list[dict]) -> dict:
    """One row from an endpoint's rounds: the median of each figure, the rounds kept."""
    row = {
        figure: statistics.median(sample[figure] for sample in samples)
        for figure in ("rps", "p50", "p95", "cpu_ms")
    }
    return row | {"errors": sum(sample["errors"] for sample in samples), "rounds": samples}


def cpu_check_ms() -> float:
    """Milliseconds of this process's CPU for the same pure Python every time. On a shared
    virtual machine it took up to twice as long at one moment as at another, and a ratio of two
    figures measured seconds apart moves with it."""
    began = time.process_time()
    total = 0
    for number in range(300_000):
        total += number * number
    return (time.process_time() - began) * 1000


def first_load(base: str) -> tuple[int, int]:
    html = urllib.request.urlopen(base + SEED).read()
    assets = re.findall(rb'(?:src|href)="(/static/[^"]+)"', html)
    size = len(gzip.compress(html))
    for asset in assets:
        size += len(gzip.compress(urllib.request.urlopen(base + asset.decode()).read()))
    return size, 1 + len(assets)


VISITOR = "lesson page, visitor without a session"
LEARNER = "lesson page, learner with progress"
PRACTICE = "practice page GET, learner with progress"
# The same learner's progress and, in this lesson too, every question answered: a constellation
# of their own (the learner above has not started this lesson, whose drawing is everyone's).
LEARNER_STARTED = "lesson page, learner who has started it"
PRACTICE_STARTED = "practice page GET, learner who has started it"
REVIEW = "/review, learner with 100 items"
# A search that finds a few lessons, and one whose words every catalogue lesson holds.
SEARCH = "/search, learner with progress"
SEARCH_BROAD = "/search matching 1,250 lessons, learner"
SEARCH_PATH = "/search?q=pipeline+bubble"
SEARCH_BROAD_PATH = "/search?q=catalogue+lesson"
POST = "practice POST (an answer)"
POST_SECOND = "practice POST, a round's second answer"
POST_TWO = "practice POST, two servers"
# A round's 4,000 prepared answers: more than 3 s have sent here (at most about 2,700; with
# 2,400, some were sent twice, and an answer sent again costs less).
ANSWERS_PER_LEARNER = 250
# Second answers cost twice the preparing (each round's first answered untimed): 3,840 a round
# (with 2,880, SQLite sent a few hundred twice here).
SECOND_ANSWERS_PER_LEARNER = 240


def measure() -> dict:
    """Every figure for the database in `database_url`."""
    data = prepare()
    port = 8300 + os.getpid() % 500
    base = f"http://127.0.0.1:{port}"
    server = gunicorn(port)
    try:
        home = urllib.request.urlopen(base + "/").read()
        stylesheet = re.search(rb'href="(/static/css/[^"]+)"', home)
        assert stylesheet is not None, "the home page links no stylesheet"
        static = stylesheet[1].decode()
        learner = data["sessions"]["learner"]
        paths = data["practice_paths"]
        learner_20 = data["sessions"]["learner_20"]
        learner_started = data["sessions"]["learner_started"]
        forms = answer_forms(paths, base, ANSWERS_PER_LEARNER * ROUNDS)
        second_forms = answer_forms(paths, base, SECOND_ANSWERS_PER_LEARNER * ROUNDS, second=True)
        endpoints = {
            "static file (server ceiling)": lambda _: wrk(base + static),
            "bare view, no database (framework ceiling)": lambda _: wrk(base + "/bench/bare"),
            VISITOR: lambda _: wrk(base + SEED),
            LEARNER: lambda _: wrk(base + SEED, learner),
            PRACTICE: lambda _: wrk(base + SEED + "/practice", learner),
            LEARNER_STARTED: lambda _: wrk(base + SEED, learner_started),
            PRACTICE_STARTED: lambda _: wrk(base + SEED + "/practice", learner_started),
            REVIEW: lambda _: wrk(base + "/review", learner),
            SEARCH: lambda _: wrk(base + SEARCH_PATH, learner),
            SEARCH_BROAD: lambda _: wrk(base + SEARCH_BROAD_PATH, learner),
            POST: lambda n: answer_load(forms[n::ROUNDS], base),
            POST_SECOND: lambda n: answer_load(second_forms[n::ROUNDS], base),
            "lesson page, learner with 20 lessons started": lambda _: wrk(base + SEED, learner_20),
            "/sky (10,000 stars), 20 lessons started": lambda _: wrk(base + "/sky", learner_20),
            "/sky (10,000 stars), new browser": lambda _: wrk(base + "/sky"),
            # A made-up session cookie is never served the kept page: what a new browser's sky
            # costs to render, once a day and after each edit in every process.
            "/sky (10,000 stars), new browser, not kept": lambda _: wrk(
                base + "/sky", "made-up-session-key"
            ),
            "/sky (10,000 stars), learner with 100 items": lambda _: wrk(base + "/sky", learner),
        }
        rounds: dict[str, list[dict]] = {name: [] for name in endpoints}
        data["cpu_check_ms"] = []
        for n in range(ROUNDS):
            analyze()  # after the answers of the forms' making and of the round before
            for name, measure_once in endpoints.items():
                data["cpu_check_ms"].append(cpu_check_ms())
                rounds[name].append(measure_once(n))
        rows = {name: summary(samples) for name, samples in rounds.items()}
        data["first_load"] = first_load(base)
        if database_url != SQLITE_URL:
            # A second server on the same database, each with its own per-process caches (one
            # round).
            second = gunicorn(port + 1)
            try:
                new_forms = answer_forms(paths, base, ANSWERS_PER_LEARNER)  # new learners
                analyze()
                two = answer_load(new_forms, base, f"http://127.0.0.1:{port + 1}")
                rows[POST_TWO] = summary([two])
            finally:
                second.terminate()
                second.wait()
    finally:
        server.terminate()
        server.wait()
    data["rows"] = rows
    return data


def main() -> None:
    global database_url
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install -y wrk")
    began = time.monotonic()
    runs: dict[str, dict] = {}
    targets = [("SQLite", SQLITE_URL)]
    if url := postgres_url():
        targets.append(("PostgreSQL", url))
    for name, url in targets:
        print(f"Preparing and measuring {name} …", flush=True)
        database_url = url
        runs[name] = measure()
    report(runs)
    print(f"\n(bench took {time.monotonic() - began:.0f} s)")


def report(runs: dict[str, dict]) -> None:
    names = list(runs)
    print(
        f"\nLightMySky bench: gunicorn {WORKERS} sync workers, {CONNECTIONS} connections, "
        f"{ROUNDS} rounds of {SECONDS}s each, "
        f"loopback; {' and '.join(names)}\n"
        "req/s, p50, p95 (ms) and cpu: the median of the rounds\n"
        "cpu: ms of CPU a request took in gunicorn's and PostgreSQL's processes (not wrk's);"
        " steadier than req/s on a shared machine\n"
    )
    header = "".join(f" {name + ' req/s':>17} {'p50':>6} {'p95':>7} {'cpu':>5}" for name in names)
    print(f"{'endpoint':48}{header}  errors")
    endpoints = list(dict.fromkeys(key for run in runs.values() for key in run["rows"]))
    for endpoint in endpoints:
        cells, errors = "", 0
        for name in names:
            row = runs[name]["rows"].get(endpoint)
            if row is None:
                cells += f" {'-':>17} {'':>6} {'':>7} {'':>5}"
                continue
            cells += f" {row['rps']:17.0f} {row['p50']:6.1f} {row['p95']:7.1f} {row['cpu_ms']:5.2f}"
            errors += row["errors"]
        print(f"{endpoint:48}{cells}  {errors}")

    def ratio(run: dict, top: str, bottom: str, figure: str = "rps") -> list[float]:
        """The ratio in each round, of two figures measured seconds apart."""
        rows = run["rows"]
        pairs = zip(rows[top]["rounds"], rows[bottom]["rounds"], strict=True)
        return [upper[figure] / lower[figure] for upper, lower in pairs]

    # (label, budget, the ratio in each round). A budget is a floor (>=) or a ceiling (<=) that
    # plain Django code clears (docs/performance.md); "-" is for information only.
    ratios = [
        (
            "visitor lesson page / static file",
            "-",
            lambda r: ratio(r, VISITOR, "static file (server ceiling)"),
        ),
        (
            "learner lesson page / visitor lesson page",
            ">= 0.25",
            lambda r: ratio(r, LEARNER, VISITOR),
        ),
        ("practice page / visitor lesson page", ">= 0.15", lambda r: ratio(r, PRACTICE, VISITOR)),
        ("/review / visitor lesson page", ">= 0.25", lambda r: ratio(r, REVIEW, VISITOR)),
        ("/search / learner lesson page", ">= 0.3", lambda r: ratio(r, SEARCH, LEARNER)),
        (
            "/search of 1,250 matches / learner lesson page",
            ">= 0.3",
            lambda r: ratio(r, SEARCH_BROAD, LEARNER),
        ),
        (
            "/search results page, KB (1,250 matches)",
            "<= 30",
            lambda r: [r["search_bytes"] / 1024],
        ),
        (
            "lesson started: lesson page / visitor page",
            "-",
            lambda r: ratio(r, LEARNER_STARTED, VISITOR),
        ),
        (
            "lesson started: practice page / visitor page",
            "-",
            lambda r: ratio(r, PRACTICE_STARTED, VISITOR),
        ),
        ("answer POST / learner lesson page", ">= 0.2", lambda r: ratio(r, POST, LEARNER)),
        (
            "a round's second answer / learner lesson page",
            "-",
            lambda r: ratio(r, POST_SECOND, LEARNER),
        ),
        (
            "answer POST p95 / learner lesson page p95",
            "<= 4",
            lambda r: ratio(r, POST, LEARNER, "p95"),
        ),
        (
            "/sky server time, 10,000 / 1,000 stars",
            "-",
            lambda r: [r["sky_ms"]["10000"] / r["sky_ms"]["1000"]],
        ),
        (
            "/sky cost / lesson page cost, 20 lessons started",
            "-",
            lambda r: ratio(
                r,
                "lesson page, learner with 20 lessons started",
                "/sky (10,000 stars), 20 lessons started",
            ),
        ),
    ]

    def cell(values: list[float]) -> str:
        spread = f"{min(values):.2f}-{max(values):.2f}" if len(values) > 1 else ""
        return f" {statistics.median(values):8.2f} {spread:>9}"

    print(
        f"\nratio: the median of the {ROUNDS} rounds' ratios, then the lowest and highest\n"
        f"{'':48}" + "".join(f" {name:>18}" for name in names) + "   target"
    )
    verdicts = []
    for label, budget, value in ratios:
        print(f"{label:48}" + "".join(cell(value(runs[n])) for n in names) + f"   {budget}")
        if budget != "-":
            for name in names:
                median = statistics.median(value(runs[name]))
                met = (
                    median >= float(budget[3:])
                    if budget[:2] == ">="
                    else median <= float(budget[3:])
                )
                verdicts.append(
                    f"{'met   ' if met else 'MISSED'} {label} {budget} ({name}: {median:.2f})"
                )
    if POST_TWO in runs[names[-1]]["rows"]:
        rows = runs[names[-1]]["rows"]
        print(
            f"{'answer POST, two servers / one server':48} {' ' * 19 * (len(names) - 1)}"
            f"{rows[POST_TWO]['rps'] / rows[POST]['rps']:8.2f}"
        )

    print("\nbudgets (the median of the rounds):")
    print("\n".join(f"  {verdict}" for verdict in verdicts))

    for name in names:
        for post in (POST, POST_SECOND):
            if repeated := sum(r["repeated"] for r in runs[name]["rows"][post]["rounds"]):
                print(f"({name}, {post}: {repeated} answers sent twice, out of forms)")

    for name in names:
        run = runs[name]
        sky = run["sky_ms"]
        sizes = run["sky_bytes"]
        transfer, requests = run["first_load"]
        answer = run["answer_ms"]
        checks = run["cpu_check_ms"]
        print(f"\n{name}:")
        print(
            f"  the machine's CPU: the same Python took {statistics.median(checks):.0f} ms "
            f"before each endpoint, from {min(checks):.0f} to {max(checks):.0f} ms; a ratio "
            "moves with it"
        )
        print(
            f"  /sky server time in-process: {sky['1000']:.0f} ms for a learner with 1,000 items, "
            f"{sky['10000']:.0f} ms with 10,000; of the 10,000-star catalogue, "
            f"{sky['20 lessons']:.0f} ms with 20 lessons started, {sky['new browser']:.0f} ms "
            "for a new browser"
        )
        print(
            f"  /sky compressed: {sizes['20 lessons'] / 1024:.1f} KB with 20 lessons started "
            f"(target <= 60), {sizes['new browser'] / 1024:.1f} KB for a new browser (<= 30); "
            f"one subject's /sky/table: {sizes['table'] / 1024:.1f} KB"
        )
        print("  SQL queries per page (warm)      lesson  practice   sky  review  search")
        for who, counts in run["queries"].items():
            print(
                f"  {who:32} {counts['lesson']:6d} {counts['practice']:9d} {counts['sky']:5d} "
                f"{counts['review']:7d} {counts['search']:7d}"
            )
        print(
            f"  first load of the lesson page: {transfer / 1024:.1f} KB compressed, "
            f"{requests} requests"
        )
        print(
            f"  one answer, service call to stored review: {answer['total']:.2f} ms "
            f"(scheduler {answer['scheduler']:.2f} ms, "
            f"the rest {answer['total'] - answer['scheduler']:.2f} ms)"
        )
        statement = run["statement_us"]
        print(
            "  one statement (SELECT 1 through Django, before the load): "
            f"{statement['wall']:.0f} µs, {statement['cpu']:.0f} µs of which the client's CPU"
        )


if __name__ == "__main__":
    main()
