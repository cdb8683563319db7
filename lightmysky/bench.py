"""`make bench`: one table of speed and size figures, all measured in one run on loopback.

It builds its own data in a separate SQLite database under var/bench/ (many lessons, and a learner
with 10,000 reviewed items), serves it with gunicorn (2 sync workers, as in production) and loads
it with wrk from Debian's packages, or a small Python client where a request needs a fresh form.
It prints figures and judges nothing; docs/performance.md reads them against the targets.
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
        "LIGHTMYSKY_BENCH": "1",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "lightmysky.settings",
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
    out = manage(
        "shell", "--no-imports", "-c", "from lightmysky.bench import build_data; build_data()"
    )
    return json.loads(out.strip().splitlines()[-1])


def build_data() -> None:
    """Runs inside Django: lessons up to 10,000 stars, and learners with 0, 100, 10,000 items."""
    from datetime import timedelta

    from django.contrib.sessions.backends.db import SessionStore
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from lessons.models import Area, ContentVersion, Lesson, Question, Subject
    from practice import scheduling, services
    from practice.models import LEARNER_PK_SESSION_KEY, LEARNER_SESSION_KEY, Learner, Memory, Review

    subject = Subject.objects.create(name="Bench", slug="bench")
    area = Area.objects.create(subject=subject, name="Bench", slug="bench")
    choices = [
        {"text": "Right", "correct": True, "explanation": ""},
        {"text": "Wrong", "correct": False, "explanation": "Because."},
    ]

    def add_lessons(count: int, offset: int) -> None:
        with transaction.atomic():
            lessons = Lesson.objects.bulk_create(
                Lesson(
                    public_id=f"mt_bench{offset + n:05d}",
                    slug=f"bench-{offset + n}",
                    title=f"Bench lesson {offset + n}",
                    summary="s",
                    subject=subject,
                    area=area,
                    age_from=10,
                    age_to=11,
                    objectives="o",
                    heading="h",
                    body="b",
                    example="e",
                    recap="r",
                    status=Lesson.Status.PUBLISHED,
                )
                for n in range(count)
            )
            Question.objects.bulk_create(
                Question(
                    lesson=lesson,
                    position=p,
                    key=f"{lesson.pk:06x}{p:02x}",
                    prompt="?",
                    choices=choices,
                    explanation="x",
                )
                for lesson in lessons
                for p in range(1, 9)
            )

    def make_learner(items: int) -> str:
        learner = Learner.objects.create()
        now = timezone.now()
        questions = list(Question.objects.filter(lesson__subject=subject).order_by("pk")[:items])
        Memory.objects.bulk_create(
            Memory(
                learner=learner,
                lesson_id=q.lesson_id,
                question=q,
                state=2,
                stability=4.0,
                difficulty=5.0,
                due=now + timedelta(days=(q.pk % 9) - 3),
                last_review=now - timedelta(days=2),
                last_rating=3,
            )
            for q in questions
        )
        Review.objects.bulk_create(
            Review(
                learner=learner,
                lesson_id=q.lesson_id,
                question=q,
                attempt=f"bench-{q.pk}",
                rating=3,
                reviewed_at=now - timedelta(days=2),
                answer="A",
                correct=True,
            )
            for q in questions
        )
        session = SessionStore()
        session[LEARNER_SESSION_KEY] = learner.public_id
        session[LEARNER_PK_SESSION_KEY] = learner.pk
        session.create()
        return session.session_key

    def sky_ms(session_key: str) -> float:
        client = Client()
        client.cookies["sessionid"] = session_key
        client.get("/sky")  # warm the map
        times = []
        for _ in range(5):
            started = time.perf_counter()
            client.get("/sky")
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)

    def queries(session_key: str | None) -> dict[str, int]:
        counts = {}
        client = Client()
        if session_key:
            client.cookies["sessionid"] = session_key
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

    add_lessons(125, 0)  # 1,000 stars
    learner_1k = make_learner(1000)
    sky_1k = sky_ms(learner_1k)
    add_lessons(1125, 125)  # 10,000 stars in all
    learner_10k = make_learner(10_000)
    sky_10k = sky_ms(learner_10k)
    learner_100 = make_learner(100)
    learner_0 = make_learner(0)

    # One answer, from service call to stored review, split into the scheduler and the rest.
    learner = Learner.objects.create()
    questions = list(Question.objects.filter(lesson__subject=subject).order_by("pk")[:300])
    started = time.perf_counter()
    for n, question in enumerate(questions):
        services.question_answer(
            learner=learner,
            question=question,
            grade=question.grade(["A"]),
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
                "sessions": {"learner": learner_100, "learner_10k": learner_10k},
                "queries": {
                    "visitor": queries(None),
                    "0": queries(learner_0),
                    "100": queries(learner_100),
                    "10000": queries(learner_10k),
                },
                "sky_ms": {"1000": sky_1k, "10000": sky_10k},
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
    sys.path.insert(0, str(ROOT))
    from tests.ops.servers import Browser, answer_form

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
        static = re.search(rb'href="(/static/css/[^"]+)"', home)[1].decode()
        learner = data["sessions"]["learner"]
        rows = {
            "static file (server ceiling)": wrk(base + static),
            "bare view, no database (framework ceiling)": wrk(base + "/bench/bare"),
            "lesson page, visitor without a session": wrk(base + SEED),
            "lesson page, learner with progress": wrk(base + SEED, learner),
            "/review, learner with 100 items": wrk(base + "/review", learner),
            "practice POST (an answer)": answer_load(base),
            # Last: its slow requests outlast wrk's timeout and would queue in front of the next.
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
    ]
    print(f"\n{'ratio':48} {'value':>9}   target")
    for name, value, target in ratios:
        print(f"{name:48} {value:9.2f}   {target}")
    print(
        f"(/sky server time: {sky['1000']:.0f} ms for 1,000 stars, "
        f"{sky['10000']:.0f} ms for 10,000)"
    )
    print("\nSQL queries per page (warm)        lesson  practice   sky  review")
    for who, counts in data["queries"].items():
        label = "visitor without a session" if who == "visitor" else f"learner with {who} items"
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
