"""The environment variables LightMySky reads, and those set that look like a mistake.

Standard library and Django's defaults only: settings.py calls this before Django is set up.

A variable that is not one of ours is refused when it looks like one of ours:
- a misspelling: difflib finds it at least SIMILARITY alike to a name the site reads
  (ALLOWED_HOST, DATABASE_ULR, SECRET_KEYS, TRUST_X_FORWADED_FOR), or
- the name of a Django setting that settings.py does not read from the environment
  (EMAIL_HOST, SESSION_COOKIE_SECURE): it would be ignored.
Everything else is left alone: PATH, HOME, LANG, PYTHONPATH, DJANGO_SETTINGS_MODULE, systemd's
and gunicorn's own variables are nowhere near that alike (tests/test_settings.py checks a list).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

# How alike two names must be (difflib's ratio) for one to be taken as a misspelling of the
# other. ALLOWED_HOST is 0.96 alike to ALLOWED_HOSTS; TEST_DATABASE_URL, a name of another
# program, 0.83 alike to DATABASE_URL.
SIMILARITY = 0.85
# A read of the environment in settings.py or gunicorn.conf.py: a call of one of the env_*
# helpers, os.environ.get or os.environ[…] with the variable's name as a literal.
READ = re.compile(
    r"""(?:env_(str|bool|int|float|list|secret)\(|os\.environ(?:\.get)?[\[(])\s*"([A-Z0-9_]+)\""""
)
# Read by the libraries the site configures, not by its own code: set in the same file.
LIBRARY_VARIABLES = frozenset(
    {
        "AWS_ACCESS_KEY_ID",  # boto3, for MEDIA_STORAGE_URL=s3://
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GUNICORN_CMD_ARGS",
        "DJANGO_SETTINGS_MODULE",
    }
)
# Django settings that the environment sets under another name.
DJANGO_SETTING_VARIABLES = {
    "DATABASES": "DATABASE_URL",
    "CACHES": "CACHE_URL",
    "SESSION_COOKIE_SECURE": "SECURE_COOKIES",
    "CSRF_COOKIE_SECURE": "SECURE_COOKIES",
    "STORAGES": "MEDIA_STORAGE_URL",
    **dict.fromkeys(
        [
            "EMAIL_HOST",
            "EMAIL_PORT",
            "EMAIL_HOST_USER",
            "EMAIL_HOST_PASSWORD",
            "EMAIL_USE_TLS",
            "EMAIL_USE_SSL",
            "EMAIL_BACKEND",
        ],
        "EMAIL_URL",
    ),
}
# A value with whitespace and then "#": a comment that systemd keeps as part of the value.
INLINE_COMMENT = re.compile(r"\s#")


def variables_read(sources: Iterable[Path]) -> frozenset[str]:
    """Every variable name these source files read (NAME_FILE too, for an env_secret)."""
    names = set(LIBRARY_VARIABLES)
    for source in sources:
        if not source.exists():
            continue
        for helper, name in READ.findall(source.read_text()):
            names.add(name)
            if helper == "secret":
                names.add(f"{name}_FILE")
    return frozenset(names)


def misread_variables(
    environ: Mapping[str, str], *, known: frozenset[str], django_settings: Iterable[str]
) -> list[str]:
    """A line for each variable set that looks like one of ours but is not read."""
    django_names = set(django_settings)
    problems = []
    for name in sorted(environ):
        if name in known:
            continue
        if nearest := difflib.get_close_matches(name, known, n=1, cutoff=SIMILARITY):
            problems.append(f"{name}: not a variable LightMySky reads; did you mean {nearest[0]}?")
        elif name in django_names:
            hint = DJANGO_SETTING_VARIABLES.get(name)
            problems.append(
                f"{name}: a Django setting, which LightMySky does not read from the environment"
                + (f"; set {hint} instead." if hint else "; .env.example lists what it reads.")
            )
    return problems


def has_inline_comment(value: str) -> bool:
    return bool(INLINE_COMMENT.search(value))
