"""`make bench-ab`: the learner's lesson page and the answer POST on two servers, A and B, in
turns, on the bench's PostgreSQL data.

On a shared virtual machine the CPU's speed drifts by more than any lever left to the answer is
worth (docs/performance.md, twenty-second pass): two `make bench` runs, minutes apart, cannot
tell a change of a tenth. Here both servers run at once on the same database and are measured
in turns, A B B A in each of AB_ROUNDS rounds (3); a turn is the learner's lesson page for
AB_SECONDS (2) and then as many seconds of answers (each a round's first, as in the bench), so
drift falls on both alike.

A is this checkout. B is this checkout with AB_ENV's variables added to its environment
(AB_ENV="PGOPTIONS='-c synchronous_commit=off'", quoted as a shell would), or another checkout
(AB_ROOT=/path, a `git worktree` of another commit, say, with the same migrations; its static
files are collected apart), or both. The database is the one `make bench` built
(BENCH_DATABASE_URL, by default the local lightmysky_bench); without the bench's catalogue it
is built here as the bench builds it. It prints each turn and each server's medians: requests
a second, the answer's rate over the page's, the CPU a request took in the servers' processes
and in PostgreSQL's apart, and any errors.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import sys
from pathlib import Path

from tools import bench
from tools.http_client import Browser

ROUNDS = int(os.environ.get("AB_ROUNDS", "3"))
SECONDS = int(os.environ.get("AB_SECONDS", "2"))  # each turn's page, then its answers
# About as the bench's learner with progress: a hundred items, none in the measured lesson.
LESSONS_LEARNED = 13
ANSWERS_PER_SECOND = 1_000  # more than either server answers here, so none is sent twice


def practice_paths() -> list[str]:
    """The published lessons' practice pages, once the bench's data is there."""
    if not catalogue_built():
        bench.prepare()
    script = (
        "import json; from lessons.models import Lesson; "
        "print(json.dumps([l.get_practice_url() for l in Lesson.objects.published()]))"
    )
    return json.loads(bench.manage("shell", "--no-imports", "-c", script).splitlines()[-1])


def catalogue_built() -> bool:
    """Whether the database holds the bench's catalogue (a thousand lessons and more). Only a
    database or a table that is not there says no: the bench's data is rebuilt from nothing."""
    import psycopg
    from psycopg import errors

    server, name = bench.server_and_name(bench.database_url)
    with psycopg.connect(server) as connection:
        query = "SELECT 1 FROM pg_database WHERE datname = %s"
        if connection.execute(query, [name]).fetchone() is None:
            return False
    try:
        with psycopg.connect(bench.database_url) as connection:
            row = connection.execute("SELECT count(*) FROM lessons_lesson").fetchone()
    except errors.UndefinedTable:
        return False
    return row is not None and row[0] >= 1_000


def environment_b() -> dict[str, str]:
    """AB_ENV's variables, as a shell would split them."""
    variables = {}
    for item in shlex.split(os.environ.get("AB_ENV", "")):
        name, equals, value = item.partition("=")
        if not equals:
            raise SystemExit(f"AB_ENV: {item!r} is not NAME=value (quote a value with spaces)")
        variables[name] = value
    return variables


def collect_static(root: Path, extra_env: dict[str, str]) -> dict[str, str]:
    """The static files of the checkout at `root`, collected under its own var/bench/."""
    static_root = {"STATIC_ROOT": str(root / "var" / "bench" / "static")}
    bench.manage("collectstatic", "--no-input", "-v0", root=root, extra_env=extra_env | static_root)
    return static_root


def learner_with_progress(base: str, paths: list[str]) -> str:
    """The session of a new learner who answered every question of a few lessons, none of them
    the measured one."""
    browser = Browser()
    for path in [path for path in paths if bench.SEED not in path][:LESSONS_LEARNED]:
        for _ in range(8):
            body = bench.answer_body(browser, base + path)
            if body is None:
                break
            browser.request(base + path, body)
    return next(cookie.value or "" for cookie in browser.cookies if cookie.name == "sessionid")


def turn(base: str, session: str, answers: list[str]) -> dict:
    page = bench.wrk(base + bench.SEED, session)
    answer = bench.answer_load(answers, base)
    return {"page": page, "answer": answer, "ratio": answer["rps"] / page["rps"]}


def describe(turns: list[dict]) -> str:
    def median(part: str, figure: str) -> float:
        return statistics.median(t[part][figure] for t in turns)

    ratios = [t["ratio"] for t in turns]
    errors = sum(t[part]["errors"] for t in turns for part in ("page", "answer"))
    repeated = sum(t["answer"]["repeated"] for t in turns)
    return (
        f"page {median('page', 'rps'):6.0f}/s (cpu {median('page', 'server_ms'):.2f}"
        f" + {median('page', 'database_ms'):.2f} ms)  answer {median('answer', 'rps'):5.0f}/s"
        f" (cpu {median('answer', 'server_ms'):.2f} + {median('answer', 'database_ms'):.2f} ms)"
        f"  answer / page {statistics.median(ratios):.2f}"
        + (f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(turns) > 1 else "")
        + (f"; {errors} ERRORS: the figures are not the site's" if errors else "")
        + (f"; {repeated} answers sent twice (cheaper): more forms needed" if repeated else "")
    )


def main() -> None:
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install -y wrk")
    bench.SECONDS = SECONDS  # what bench.wrk and bench.answer_load load for
    extra_env = environment_b()
    root_b = Path(os.environ.get("AB_ROOT") or bench.ROOT).resolve()
    if not extra_env and root_b == bench.ROOT:
        raise SystemExit("Name what B changes: AB_ENV='NAME=value …' and/or AB_ROOT=/checkout")
    bench.database_url = bench.postgres_url() or sys.exit("make bench-ab needs PostgreSQL")
    paths = practice_paths()
    print(f"A: {bench.ROOT}\nB: {root_b} {shlex.join(f'{k}={v}' for k, v in extra_env.items())}")
    if root_b != bench.ROOT:
        extra_env |= collect_static(root_b, extra_env)
    port = 8300 + os.getpid() % 500
    bases = {"A": f"http://127.0.0.1:{port}", "B": f"http://127.0.0.1:{port + 1}"}
    servers = []
    try:
        servers.append(bench.gunicorn(port))
        servers.append(bench.gunicorn(port + 1, root=root_b, extra_env=extra_env))
        session = learner_with_progress(bases["A"], paths)
        # A learner answers a lesson once at most (answer_forms); a turn short of forms says so.
        per_learner = min(
            2 * ROUNDS * ANSWERS_PER_SECOND * SECONDS // bench.CONNECTIONS, len(paths) - 1
        )
        forms = {name: bench.answer_forms(paths, base, per_learner) for name, base in bases.items()}
        bench.analyze()
        turns: dict[str, list[dict]] = {"A": [], "B": []}
        for number in range(ROUNDS):
            for name in ("A", "B", "B", "A"):
                done = len(turns[name])
                measured = turn(bases[name], session, forms[name][done :: 2 * ROUNDS])
                turns[name].append(measured)
                print(f"round {number + 1}, {name}: {describe([measured])}", flush=True)
        for name, its_turns in turns.items():
            print(f"{name}, medians of {len(its_turns)} turns: {describe(its_turns)}")
    finally:
        for server in servers:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
