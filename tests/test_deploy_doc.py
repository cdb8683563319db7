"""The deployment files say what the code does, in a form systemd reads as the shell does."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement

from tests.ops.servers import ROOT

ENV_BLOCK = re.compile(r"^`/etc/lightmysky\.env`:\n\n```\w*\n(.*?)^```", re.M | re.S)


def assignments(text: str) -> list[tuple[str, str]]:
    """(name, raw value) of each NAME=value line that is not a comment."""
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith(("#", ";")):
            name, _, value = line.partition("=")
            found.append((name, value))
    return found


def documented_env_file() -> str:
    match = ENV_BLOCK.search((ROOT / "docs" / "deploy.md").read_text())
    assert match, "docs/deploy.md shows no /etc/lightmysky.env block"
    return match[1]


def test_no_env_value_carries_a_comment_quotes_or_trailing_space():
    # systemd keeps `value  # comment` whole, where the shell that runs manage.py drops the
    # comment: the service and the command line then run with two different SECRET_KEYs.
    for text in (documented_env_file(), (ROOT / ".env.example").read_text()):
        for name, value in assignments(text):
            assert name == name.strip() and re.fullmatch(r"[A-Z][A-Z0-9_]*", name), name
            assert "#" not in value and value == value.strip(), f"{name}={value!r}"
            assert not value.startswith(("'", '"')), f"{name}={value!r}"


def variables_read_by_the_code() -> set[str]:
    pattern = re.compile(
        r"""(?:env_(?:str|bool|int|float|list|secret)\(|os\.environ(?:\.get)?[\[(])\s*"([A-Z0-9_]+)\""""
    )
    sources = [ROOT / "gunicorn.conf.py", *(ROOT / "lightmysky").rglob("*.py")]
    return {name for path in sources for name in pattern.findall(path.read_text())}


# Read by gunicorn.conf.py but set by gunicorn itself (in a master started by a reload).
SET_BY_GUNICORN = {"GUNICORN_PID"}


def test_env_example_lists_every_variable_the_code_reads():
    listed = set(re.findall(r"^#?([A-Z][A-Z0-9_]*)=", (ROOT / ".env.example").read_text(), re.M))
    missing = variables_read_by_the_code() - listed - SET_BY_GUNICORN
    assert not missing, f"not in .env.example: {sorted(missing)}"


def test_the_documented_env_file_sets_only_variables_the_code_reads():
    names = {name for name, _ in assignments(documented_env_file())}
    assert names <= variables_read_by_the_code()


def test_the_lock_file_satisfies_the_declared_dependencies():
    pinned = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for spec in map(Requirement, project["dependencies"]):
        name = re.sub(r"[-_.]+", "-", spec.name).lower()
        assert name in pinned, f"{spec.name} is not in requirements.lock"
        assert spec.specifier.contains(pinned[name]), f"{spec} but the lock has {pinned[name]}"
