"""Turn docs/deploy.md into the bash script that .ci/deploy-check runs: its `sh` blocks and the
files shown under a path (a line "`/path`:" just before the block), in the document's order.

usage: doc_script.py DOC NAME PORT GIT_URL PYTHON > script.sh

The only changes, each printed by the script as it runs:
- `lightmysky` starting a word (user, group, database, role, folders, units) becomes NAME, but in
  `lightmysky.wsgi` and `lightmysky.example.org`;
- port 8000 becomes PORT;
- the git host's address becomes GIT_URL (a local copy of the repository);
- `python3 -m venv` uses PYTHON (a 3.12+ interpreter every user can run: CI's Debian has 3.11,
  so it takes the doc's advice for an older distribution);
- a line starting with one of SKIPPED is shown, not run.

At each section heading ("## 8. Upgrades") the script calls `deploy_doc_section TITLE`, a no-op
unless the caller exported a function of that name (.ci/deploy-check moves the git host to the
new release before section 8).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

SKIPPED = {"certbot": "needs a public DNS name and a certificate authority"}
FENCE = re.compile(r"^```(\w*)\s*$")
PATH_LINE = re.compile(r"^`(/[^`]+)`:\s*$")
HEADING = re.compile(r"^## (.+?)\s*$")
DOC_GIT_URL = "https://your.git.host/lightmysky.git"


def blocks(text: str) -> list[tuple[str, str | None, list[str]]]:
    """(language, target path or None, lines) of each fenced block, in order, and ("heading",
    None, [title]) of each section heading among them."""
    found = []
    lines = text.splitlines()
    i = 0
    previous = ""
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening and opening[1]:
            body = []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            target = PATH_LINE.match(previous)
            found.append((opening[1], target[1] if target else None, body))
            previous = "```"
        elif heading := HEADING.match(lines[i]):
            found.append(("heading", None, [heading[1]]))
            previous = lines[i]
        elif lines[i].strip():
            previous = lines[i]
        i += 1
    return found


def substitute(text: str, name: str, port: str, git_url: str, python: str) -> str:
    text = text.replace(DOC_GIT_URL, git_url)
    text = re.sub(r"(?<!\w)lightmysky(?!\.(?:wsgi|example\.org))", name, text)
    text = text.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    return text.replace("python3 -m venv", f"{python} -m venv")


def script(doc: Path, name: str, port: str, git_url: str, python: str) -> str:
    out = [
        "set -euo pipefail",
        "type deploy_doc_section >/dev/null 2>&1 || deploy_doc_section() { :; }",
        "",
    ]
    for language, target, body in blocks(doc.read_text()):
        if language == "heading":
            out.append(f"deploy_doc_section {shlex.quote(body[0])}")
            continue
        text = substitute("\n".join(body), name, port, git_url, python)
        if target:
            path = substitute(target, name, port, git_url, python)
            out.append(f"echo {shlex.quote(f'## write {path} ({len(body)} lines)')}")
            out.append(f"cat > {shlex.quote(path)} <<'DEPLOY_DOC_EOF'\n{text}\nDEPLOY_DOC_EOF")
            continue
        if language != "sh":
            continue
        for line in text.splitlines():
            if not line.strip():
                continue
            skip = next((why for word, why in SKIPPED.items() if line.startswith(word)), None)
            if skip:
                out.append(f"echo {shlex.quote(f'## skipped ({skip}): {line}')}")
                continue
            out.append(f'echo "[${{SECONDS}}s] "{shlex.quote("$ " + line)}')
            out.append(line)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    doc, name, port, git_url, python = sys.argv[1:]
    sys.stdout.write(script(Path(doc), name, port, git_url, python))
