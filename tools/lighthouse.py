"""`make lighthouse`: Lighthouse's four scores for the pages the performance budget names.

It serves the demo with gunicorn under the bench's production-like settings (its own SQLite
database under var/lighthouse/), answers one question as a learner, and runs Lighthouse (from
the npm registry, into var/lighthouse/) in Debian's Chromium on the lesson page for a visitor
and on the lesson, practice, review, sky and progress pages for that learner. It prints each
page's scores and the audits that lost points, and judges nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tools import bench
from tools.http_client import Browser, answer_form

WORK = bench.ROOT / "var" / "lighthouse"
LIGHTHOUSE = WORK / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = "performance,accessibility,best-practices,seo"


def scores(url: str, cookie: str | None) -> tuple[dict[str, int], list[str]]:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command = [
            str(LIGHTHOUSE),
            url,
            "--quiet",
            "--output=json",
            f"--output-path={report}",
            f"--only-categories={CATEGORIES}",
            "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
        ]
        if cookie:
            command.append("--extra-headers=" + json.dumps({"Cookie": cookie}))
        chrome = {"CHROME_PATH": shutil.which("chromium") or "/usr/bin/chromium"}
        # Lighthouse once failed here on a first page and passed on the next run: try twice,
        # and if it fails both times, show its own message rather than a bare exit status.
        for _ in range(2):
            run = subprocess.run(command, env=os.environ | chrome, capture_output=True, text=True)
            if run.returncode == 0:
                break
        else:
            raise SystemExit(f"Lighthouse failed on {url}:\n{run.stderr[-2000:]}")
        found = json.loads(report.read_text())
    categories = {name: round(c["score"] * 100) for name, c in found["categories"].items()}
    lost = [
        name
        for name, audit in found["audits"].items()
        if audit.get("scoreDisplayMode") in ("binary", "numeric") and (audit["score"] or 0) < 1
    ]
    return categories, lost


def main() -> None:
    if not LIGHTHOUSE.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--silent", "--prefix", str(WORK), "lighthouse@12"], check=True
        )
    shutil.rmtree(WORK / "site", ignore_errors=True)
    (WORK / "site").mkdir(parents=True)
    bench.database_url = f"sqlite:///{WORK / 'site' / 'db.sqlite3'}"
    bench.manage("migrate", "--no-input", "-v0")
    bench.manage("collectstatic", "--no-input", "-v0")
    bench.manage("load_demo")
    port = 8900 + os.getpid() % 90
    base = f"http://127.0.0.1:{port}"
    server = bench.gunicorn(port)
    try:
        browser = Browser()
        practice = bench.SEED + "/practice"
        form = answer_form(browser.request(base + practice)[1])
        assert form is not None, "the practice page shows no question"
        body = {"csrfmiddlewaretoken": browser.csrf(), "token": form[0], "choice": form[1]}
        browser.request(base + practice, body)
        cookie = "; ".join(f"{c.name}={c.value}" for c in browser.cookies)
        pages = [("visitor", "lesson", bench.SEED, None)] + [
            ("learner", name, path, cookie)
            for name, path in (
                ("lesson", bench.SEED),
                ("practice", practice),
                ("review", "/review"),
                ("sky", "/sky"),
                ("progress", "/progress"),
            )
        ]
        print(f"{'page':20}" + "".join(f"{name:>16}" for name in CATEGORIES.split(",")))
        for who, name, path, page_cookie in pages:
            categories, lost = scores(base + path, page_cookie)
            row = "".join(f"{categories[name]:16d}" for name in CATEGORIES.split(","))
            print(f"{who + ' ' + name:20}{row}   {', '.join(lost) or '-'}", flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
