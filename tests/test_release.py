"""The release: pyproject.toml's version, its CHANGELOG.md entry, and where it shows."""

from __future__ import annotations

import re
import subprocess
import tomllib

from lightmysky.release import release
from tests.ops.servers import ROOT


def test_the_release_is_pyprojects_version():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert release() == pyproject["project"]["version"]


def test_the_changelog_opens_with_this_release_and_names_each_earlier_ones_commit():
    text = (ROOT / "CHANGELOG.md").read_text()
    entries = re.findall(r"^## (\d+\.\d+\.\d+)(.*)$", text, re.M)
    assert entries[0][0] == release(), "no CHANGELOG.md entry for pyproject.toml's version"
    for version, _ in entries[1:]:
        entry = text.split(f"## {version}", 1)[1].split("\n## ", 1)[0]
        commit = re.search(r"^Commit: `([0-9a-f]{7,40})`", entry, re.M)
        assert commit, f"{version} names no commit"
        git = subprocess.run(
            ["git", "cat-file", "-t", commit[1]], cwd=ROOT, capture_output=True, text=True
        )
        # A copy without git history (an archive) cannot check it; a clone must.
        assert git.stdout.strip() == "commit" or "not a git repository" in git.stderr


def test_readyz_names_the_release(client, db):
    assert client.get("/readyz").json()["release"] == release()
