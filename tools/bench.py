"""`make bench`: one table of speed and size figures, all measured in one run on loopback.

It builds its own data in a separate SQLite database under var/bench/ (a catalogue of 1,250 lessons
from tools/catalogue.py, and learners with 0 to 10,000 reviewed items or 20 lessons started),
serves it with gunicorn (2 sync workers, as in production) under its own settings and URLs
(tools/bench_settings.py: the site's, plus a page without the database) and loads it with wrk
from Debian's packages, or a small Python client where a request needs a fresh form. It prints
figures and judges nothing; docs/performance.md reads them against the targets.
"""

from __future__ import annotations

import gzip
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
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
CONNECTIONS = 16
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


def env() -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DEBUG"}},
        "DEBUG": "0",
        "SECRET_KEY": "bench-" + "k" * 50,
        "DATABASE_URL": f"sqlite:///{WORK / 'bench.sqlite3'}",
        "ALLOWED_HOSTS": "127.0.0.1,testserver",
        "SITE_URL": "http://127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "STATIC_ROOT": str(WORK / "static"),
        "RATE_LIMIT_SCALE": "100000",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "tools.bench_settings",
    }


def manage(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env(), capture_output=True, text=True
    )
    if result.returncode:
        raise SystemExit(result.stderr)
    return result.stdout


def prepare() -> dict:
    """Migrate, collect static files, load the demo and the large data; return what to measure."""
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    manage("migrate", "--no-input", "-v0")
    manage("collectstatic", "--no-input", "-v0")
    manage("load_demo")
    out = manage("shell", "--no-imports", "-c", "from tools.bench import build_data; build_data()")
    return json.loads(out.strip().splitlines()[-1])


def build_data() -> None:
    """Runs inside Django: 1,250 lessons (10,000 stars) and the learners to measure."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from lessons.models import ContentVersion, Question
    from practice import scheduling, services
    from practice.models import Learner
    from tools import catalogue

    def make_learner(items: int) -> str:
        questions = list(
            Question.objects.filter(lesson__public_id__startswith="mt_cat").order_by("pk")[:items]
        )
        return catalogue.session_of(catalogue.learner_with(questions, timezone.now()))

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

    print(
        json.dumps(
            {
                "sessions": {"learner": learner_100, "learner_20": learner_20},
                "queries": {
                    "visitor": queries(None),
                    "0": queries(learner_0),
                    "100": queries(learner_100),
                    "10000": queries(learner_10k),
                    "20 lessons": queries(learner_20),
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
                "version": ContentVersion.for_request(),
            }
        )
    )


def gunicorn(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "-c",
            "gunicorn.conf.py",
            "lightmysky.wsgi",
        ],
        cwd=ROOT,
        env=env() | {"BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "2"},
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


def wrk(url: str, cookie: str | None = None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_REPORT)
    command = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "-s", script.name, url]
    if cookie:
        command[1:1] = ["-H", f"Cookie: sessionid={cookie}"]
    output = subprocess.run(command, capture_output=True, text=True).stdout
    os.unlink(script.name)
    line = next(line for line in output.splitlines() if line.startswith("RESULT"))
    rps, p50, p95, errors, count = line.split()[1:]
    return {"rps": float(rps), "p50": float(p50), "p95": float(p95), "errors": int(errors)}


def answer_load(base: str) -> dict:
    """Practice POSTs from 16 Python clients, each answering its own round: only POSTs timed."""
    from tools.http_client import Browser, answer_form

    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + SECONDS

    def client() -> None:
        browser = Browser()
        while time.monotonic() < stop:
            status, html = browser.request(base + SEED + "/practice")
            form = answer_form(html)
            if form is None:
                browser = Browser()
                continue
            started = time.perf_counter()
            status, _ = browser.request(
                base + SEED + "/practice",
                {"csrfmiddlewaretoken": browser.csrf(), "token": form[0], "choice": form[1]},
            )
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(elapsed)
                errors[0] += status != 302

    threads = [threading.Thread(target=client) for _ in range(CONNECTIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies.sort()
    return {
        "rps": len(latencies) / SECONDS,
        "p50": latencies[len(latencies) // 2],
        "p95": latencies[int(len(latencies) * 0.95)],
        "errors": errors[0],
    }


def first_load(base: str) -> tuple[int, int]:
    html = urllib.request.urlopen(base + SEED).read()
    assets = re.findall(rb'(?:src|href)="(/static/[^"]+)"', html)
    size = len(gzip.compress(html))
    for asset in assets:
        size += len(gzip.compress(urllib.request.urlopen(base + asset.decode()).read()))
    return size, 1 + len(assets)


def main() -> None:
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install -y wrk")
    began = time.monotonic()
    print("Preparing the benchmark database (var/bench/) …", flush=True)
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
        learner_20 = data["sessions"]["learner_20"]
        rows = {
            "static file (server ceiling)": wrk(base + static),
            "bare view, no database (framework ceiling)": wrk(base + "/bench/bare"),
            "lesson page, visitor without a session": wrk(base + SEED),
            "lesson page, learner with progress": wrk(base + SEED, learner),
            "/review, learner with 100 items": wrk(base + "/review", learner),
            "practice POST (an answer)": answer_load(base),
            "lesson page, learner with 20 lessons started": wrk(base + SEED, learner_20),
            "/sky (10,000 stars), 20 lessons started": wrk(base + "/sky", learner_20),
            "/sky (10,000 stars), new browser": wrk(base + "/sky"),
            "/sky (10,000 stars), learner with 100 items": wrk(base + "/sky", learner),
        }
        transfer, requests = first_load(base)
    finally:
        server.terminate()
        server.wait()

    print(
        f"\nLightMySky bench: gunicorn 2 workers, {CONNECTIONS} connections, {SECONDS}s each, "
        "loopback, SQLite\n"
    )
    print(f"{'endpoint':48} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7}")
    for name, row in rows.items():
        print(f"{name:48} {row['rps']:9.0f} {row['p50']:8.1f} {row['p95']:8.1f} {row['errors']:7d}")
    static_rps = rows["static file (server ceiling)"]["rps"]
    bare_rps = rows["bare view, no database (framework ceiling)"]["rps"]
    anon = rows["lesson page, visitor without a session"]
    learner_row = rows["lesson page, learner with progress"]
    post = rows["practice POST (an answer)"]
    sky = data["sky_ms"]
    ratios = [
        ("anonymous lesson page / static file", anon["rps"] / static_rps, ">= 0.5"),
        ("learner lesson page / bare view", learner_row["rps"] / bare_rps, ">= 0.7"),
        ("/sky server time, 10,000 / 1,000 stars", sky["10000"] / sky["1000"], "<= 10.5"),
        ("answer POST p95 / learner lesson page p95", post["p95"] / learner_row["p95"], "<= 3"),
        (
            "/sky cost / lesson page cost, 20 lessons started",
            rows["lesson page, learner with 20 lessons started"]["rps"]
            / rows["/sky (10,000 stars), 20 lessons started"]["rps"],
            "<= 3",
        ),
    ]
    print(f"\n{'ratio':48} {'value':>9}   target")
    for name, value, target in ratios:
        print(f"{name:48} {value:9.2f}   {target}")
    print(
        f"(/sky server time in-process: {sky['1000']:.0f} ms for a learner with 1,000 items, "
        f"{sky['10000']:.0f} ms with 10,000; of the 10,000-star catalogue, "
        f"{sky['20 lessons']:.0f} ms with 20 lessons started, {sky['new browser']:.0f} ms "
        "for a new browser)"
    )
    sizes = data["sky_bytes"]
    print(
        f"\n/sky of the 10,000-star catalogue, compressed: {sizes['20 lessons'] / 1024:.1f} KB "
        f"with 20 lessons started (target <= 60), {sizes['new browser'] / 1024:.1f} KB for a new "
        f"browser (<= 30); one subject's /sky/table: {sizes['table'] / 1024:.1f} KB"
    )
    print("\nSQL queries per page (warm)        lesson  practice   sky  review")
    for who, counts in data["queries"].items():
        label = (
            "visitor without a session"
            if who == "visitor"
            else f"learner with {who}" + ("" if "lessons" in who else " items")
        )
        print(
            f"{label:34} {counts['lesson']:6d} {counts['practice']:9d} {counts['sky']:5d} "
            f"{counts['review']:7d}"
        )
    print(
        f"\nfirst load of the lesson page: {transfer / 1024:.1f} KB compressed, {requests} requests"
    )
    answer = data["answer_ms"]
    rest = answer["total"] - answer["scheduler"]
    print(
        f"one answer, service call to stored review: {answer['total']:.2f} ms "
        f"(scheduler {answer['scheduler']:.2f} ms, the rest {rest:.2f} ms)"
    )
    print(f"\n(bench took {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
