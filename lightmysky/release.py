"""The release this code is: the version in pyproject.toml (CHANGELOG.md says what each changed)."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


@cache
def release() -> str:
    """pyproject.toml's version when the code runs from a checkout (as docs/deploy.md installs
    it: the project itself is not pip-installed, and an editable install's metadata keeps the
    version it was installed at), else the installed package's, else "unknown"."""
    try:
        return str(tomllib.loads(PYPROJECT.read_text())["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    try:
        return version("lightmysky")
    except PackageNotFoundError:
        return "unknown"
