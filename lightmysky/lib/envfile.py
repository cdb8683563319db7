"""An environment file read as systemd reads `EnvironmentFile=` (systemd.exec(5)), for
gunicorn.conf.py: systemd reads the file only when it starts the service, and a reload reads it
again through this."""

from __future__ import annotations

from pathlib import Path


def read_environment_file(path: str | Path) -> dict[str, str]:
    """NAME=value lines: a line that starts with # or ; is a comment, a trailing backslash joins
    the next line, quotes around a whole value are removed, and anything else after the `=` is
    the value (an unquoted `value  # note` keeps the note, as systemd does)."""
    found: dict[str, str] = {}
    lines = Path(path).read_text().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip(" \t\r")
        i += 1
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + lines[i].strip(" \t\r")
            i += 1
        if not line or line[0] in "#;" or "=" not in line:
            continue
        name, _, value = line.partition("=")
        value = value.lstrip(" \t")
        if len(value) > 1 and value[0] in "'\"" and value.endswith(value[0]):
            found[name.strip()] = value[1:-1]
        else:
            found[name.strip()] = value.rstrip(" \t")
    return found
