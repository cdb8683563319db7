"""Settings for LightMySky, all taken from environment variables.

`make run` needs none of them: without DATABASE_URL the site uses a SQLite file in the project,
and DEBUG is on. See `.env.example` for every variable.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import dj_database_url
from django.conf import global_settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    word = value.strip().lower()
    if word not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
        # Read as "off", a mistyped SECURE_COOKIES=y would quietly turn a protection off.
        raise ImproperlyConfigured(
            f"{name} must be 1 or 0 (or true/false, yes/no, on/off), not {value!r}."
        )
    return word in {"1", "true", "yes", "on"}


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name).strip() or default
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {value!r}.")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}.") from None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}.") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def env_secret(name: str) -> str:
    """Read NAME, or the contents of the file named by NAME_FILE (for container secrets)."""
    if path := os.environ.get(f"{name}_FILE"):
        return Path(path).read_text().strip()
    return os.environ.get(name, "")


# Variables set that look like ours but are not read: refused, naming the one meant (below,
# before any value is used). A variable that is not one the site reads is refused when it is
# - a misspelling: difflib finds it, in capitals, at least 85 % alike to a name the site reads
#   (ALLOWED_HOST is 0.96 alike to ALLOWED_HOSTS; TEST_DATABASE_URL, another program's, 0.83 to
#   DATABASE_URL; allowed_hosts is ALLOWED_HOSTS in the wrong case), or
# - the name of a Django setting that this file does not read from the environment
#   (EMAIL_HOST, SESSION_COOKIE_SECURE): it would be ignored.
# Everything else is left alone: PATH, HOME, LANG, PYTHONPATH, DJANGO_SETTINGS_MODULE, systemd's
# and gunicorn's own variables are nowhere near that alike (tests/test_settings.py checks a list).


def variables_read(sources: Iterable[Path]) -> frozenset[str]:
    """Every variable these source files read with its name written out (a call of an env_*
    helper, os.environ.get or os.environ[…]; NAME_FILE too for env_secret), and those read by
    the libraries the site configures, which are set in the same file."""
    read = re.compile(
        r"""(?:env_(str|bool|int|float|list|secret|choice)\(|os\.environ(?:\.get)?[\[(])\s*"([A-Z0-9_]+)\""""
    )
    names = {
        "AWS_ACCESS_KEY_ID",  # boto3, for MEDIA_STORAGE_URL=s3://
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GUNICORN_CMD_ARGS",
        "GUNICORN_FD",  # set by gunicorn for the new master of a reload (USR2)
        "GUNICORN_PID",
        "DJANGO_SETTINGS_MODULE",
        # Replaced by TRUSTED_PROXIES: still recognised, so `check` can name them instead.
        "TRUST_X_FORWARDED_FOR",
        "TRUSTED_PROXY_HOPS",
    }
    for source in sources:
        if source.exists():
            for helper, name in read.findall(source.read_text()):
                names |= {name, f"{name}_FILE"} if helper == "secret" else {name}
    return frozenset(names)


def misread_variables(
    environ: Mapping[str, str], *, known: frozenset[str], django_settings: Iterable[str]
) -> list[str]:
    """A line for each variable set that looks like one of ours but is not read."""
    # Django settings that the environment sets under another name.
    instead = {
        "DATABASES": "DATABASE_URL",
        "CACHES": "CACHE_URL",
        "SESSION_COOKIE_SECURE": "SECURE_COOKIES",
        "CSRF_COOKIE_SECURE": "SECURE_COOKIES",
        "STORAGES": "MEDIA_STORAGE_URL",
    } | {f"EMAIL_{name}": "EMAIL_URL" for name in ("HOST", "PORT", "HOST_USER", "HOST_PASSWORD")}
    instead |= {f"EMAIL_{name}": "EMAIL_URL" for name in ("USE_TLS", "USE_SSL", "BACKEND")}
    django_names = set(django_settings)
    problems = []
    for name in sorted(environ):
        if name in known:
            continue
        # Names are compared in capitals: a lowercase allowed_hosts is as ignored as a typo.
        if nearest := difflib.get_close_matches(name.upper(), known, n=1, cutoff=0.85):
            problems.append(f"{name}: not a variable LightMySky reads; did you mean {nearest[0]}?")
        elif name in django_names:
            problems.append(
                f"{name}: a Django setting, which LightMySky does not read from the environment"
                + (f"; set {instead[name]} instead." if name in instead else "")
            )
    return problems


def has_inline_comment(value: str) -> bool:
    """Whitespace and then "#": a comment that systemd keeps as part of the value."""
    return bool(re.search(r"\s#", value))


def database_from_url(url: str) -> dict:
    """Turn a postgres:// or sqlite:/// URL into a Django DATABASES entry (read by dj-database-url).

    A percent-encoded Unix socket works as the host (postgres://user@%2Fvar%2Frun%2Fpostgresql/db).
    `conn_max_age` in the query string sets CONN_MAX_AGE; every other parameter goes to the driver.
    """
    scheme = urlsplit(url).scheme
    if scheme not in {"postgres", "postgresql", "pgsql", "sqlite"}:
        raise ImproperlyConfigured(
            f"DATABASE_URL must start with postgres:// or sqlite:///, not {scheme or url!r}."
        )
    config = dj_database_url.parse(url)
    options = config.get("OPTIONS", {})
    conn_max_age = options.pop("conn_max_age", None)
    if scheme == "sqlite":
        # sqlite:///db.sqlite3 is relative to the working directory, sqlite:////srv/db.sqlite3
        # (four slashes) an absolute path.
        name = config["NAME"]
        database = sqlite_database(name if name == ":memory:" else Path(name))
    else:
        database = {
            **config,
            "ENGINE": "django.db.backends.postgresql",
            # Persistent connections: opening one per request costs two thirds of throughput.
            "CONN_MAX_AGE": env_int("CONN_MAX_AGE", 600),
            # A kept connection the server dropped is replaced before the request uses it.
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": {**POSTGRES_KEEPALIVES, **options},
        }
    if conn_max_age is not None:
        try:
            database["CONN_MAX_AGE"] = int(conn_max_age)
        except ValueError:
            raise ImproperlyConfigured(
                f"conn_max_age in DATABASE_URL must be a whole number, not {conn_max_age!r}."
            ) from None
    return database


# TCP keepalives on connections to PostgreSQL (libpq's options; a parameter of the same name in
# DATABASE_URL wins). A kept connection that sits idle is probed after a minute: the probes
# keep a NAT's or a load balancer's entry for it alive, and a peer gone without a word is
# found within 90 s. Unix sockets ignore them.
POSTGRES_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 60,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}


def sqlite_database(path: Path | str) -> dict:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        # Reuse the connection: opening SQLite and setting WAL mode on every request costs
        # more than the page it serves.
        "CONN_MAX_AGE": env_int("CONN_MAX_AGE", 600),
        # Writers take the lock at BEGIN, so two requests never deadlock upgrading a read lock;
        # a writer waits up to 20 s for another to finish. SQLite serves one server: beyond that,
        # PostgreSQL (docs/scaling.md).
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
        },
    }


# A variable that looks like one of ours but is not read (a misspelling, or a Django setting's
# name) stops the site: a typo must not leave a default silently in place. The names read are
# those this file and gunicorn.conf.py read; the rule is above, by misread_variables.
if _misread := misread_variables(
    os.environ,
    known=variables_read([Path(__file__), BASE_DIR / "gunicorn.conf.py"]),
    django_settings=[name for name in dir(global_settings) if name.isupper()],
):
    raise ImproperlyConfigured(
        "The environment sets variables that LightMySky does not read. Rename or remove them "
        "(docs/deploy.md, section 3):\n  " + "\n  ".join(_misread)
    )

# Off unless asked for: a deployment that forgets its environment must not run in debug mode.
# `make run` and `make test` set DEBUG=1.
DEBUG = env_bool("DEBUG", default=False)
TESTING = "pytest" in sys.modules

SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not (DEBUG or TESTING):
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. With DEBUG off the site refuses to start without one: "
            "set SECRET_KEY (or SECRET_KEY_FILE) to a long random string, for example the output "
            "of "
            "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`."
        )
    SECRET_KEY = "insecure-development-key-only-for-debug-mode"
# Earlier keys, comma-separated, still accepted for sessions, signed forms and transfer codes:
# rotate a key without logging every learner out (docs/deploy.md, "Rotating the secret key").
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS")
for _name, _value in [
    ("SECRET_KEY", SECRET_KEY),
    ("SECRET_KEY_FALLBACKS", ",".join(SECRET_KEY_FALLBACKS)),
]:
    if has_inline_comment(_value):
        # systemd's EnvironmentFile= keeps `KEY=value  # note` whole; a shell that sources the
        # file drops the comment: the service and manage.py would sign with two different keys.
        raise ImproperlyConfigured(
            f"{_name} holds whitespace and then '#': an inline comment? systemd keeps a comment "
            f"after a value as part of it, while a shell drops it, so the service and manage.py "
            f"would use different keys. Put the comment on a line of its own, above {_name}."
        )

# After the comment check: `abc  # note` is a comment mistake first, a short key second.
if not (DEBUG or TESTING) and (len(SECRET_KEY) < 50 or SECRET_KEY.startswith("change-me")):
    raise ImproperlyConfigured(
        "SECRET_KEY is too short or still the example's placeholder. Set a random one of 50 or "
        "more characters: `python3 -c 'import secrets; print(secrets.token_urlsafe(50))'`."
    )

# The default SITE_URL's host is among the default ALLOWED_HOSTS (/readyz checks that they agree).
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG or TESTING else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# The public origin, used in canonical links, the agent files and transfer QR codes.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000" if DEBUG or TESTING else "").rstrip("/")
if not SITE_URL:
    raise ImproperlyConfigured(
        "SITE_URL is not set. With DEBUG off, set it to the site's public origin, "
        "for example https://lightmysky.example.org, so links and agent files name it."
    )
_site = urlsplit(SITE_URL)
if _site.scheme not in {"http", "https"} or not _site.hostname or _site.path or _site.query:
    raise ImproperlyConfigured(
        f"SITE_URL must be an origin with its scheme and no path, like "
        f"https://lightmysky.example.org, not {SITE_URL!r}."
    )
SITE_NAME = "LightMySky"

INSTALLED_APPS = [
    "lightmysky.apps.LimitedAdminConfig",  # django.contrib.admin, sign-ins limited
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sitemaps",
    "django.contrib.postgres",  # search on PostgreSQL (lessons.search); inert on SQLite
    "django_htmx",
    "lightmysky",
    "lessons",
    "practice",
]

MIDDLEWARE = [
    "lightmysky.middleware.request_log_middleware",
    "lightmysky.middleware.health_middleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "lightmysky.middleware.permissions_policy_middleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "lightmysky.middleware.request_size_middleware",
    "lightmysky.middleware.staff_session_middleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "lightmysky.middleware.open_reads_middleware",
    "lightmysky.middleware.private_for_learners_middleware",
]

ROOT_URLCONF = "lightmysky.urls"
WSGI_APPLICATION = "lightmysky.wsgi.application"

TEMPLATES: list[dict[str, Any]] = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "lightmysky.context_processors.site",
                "practice.context_processors.sky_counter",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL")
if not (DATABASE_URL or DEBUG or TESTING):
    # A forgotten variable must not quietly put production on a SQLite file in the checkout.
    raise ImproperlyConfigured(
        "DATABASE_URL is not set. With DEBUG off, name the database: postgres://USER@HOST/NAME, "
        "or sqlite:////srv/lightmysky/site.sqlite3 for a one-process site on SQLite."
    )
DATABASES = {
    "default": database_from_url(DATABASE_URL)
    if DATABASE_URL
    else sqlite_database(BASE_DIR / "db.sqlite3")
}
if TESTING and DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not Django's shared in-memory database: the browser tests' live server answers in
    # threads of its own, which must not share the test thread's connection.
    # A DATABASE_URL of sqlite:///x.sqlite3 tests in x-test.sqlite3, so runs can work side by side.
    _db = Path(DATABASES["default"]["NAME"])
    _test_db = (
        _db.with_name(f"{_db.stem}-test.sqlite3")
        if DATABASE_URL
        else BASE_DIR / "var" / "test-db.sqlite3"
    )
    _test_db.parent.mkdir(exist_ok=True)
    DATABASES["default"]["TEST"] = {"NAME": _test_db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Anonymous progress lives in the database-backed session, so any app server can serve any request
# (with CACHE_URL=redis://, read through that shared cache first: SESSION_ENGINE is set below).
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 60 * 60 * 24 * 400)
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True

# Production defaults (https only) apply unless this is a debug run or the test suite.
SECURE_BY_DEFAULT = not (DEBUG or TESTING)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=SECURE_BY_DEFAULT)
# /healthz and /readyz are answered before this redirect (lightmysky.middleware.health_middleware).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365 if SECURE_BY_DEFAULT else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
# Both are the operator's choice for the whole domain, not this site's (preload is a submission to
# the browsers' list that takes months to undo): off by default, and `check --deploy` does not
# insist on them. docs/deploy.md says when to turn them on.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]
if SECURE_HSTS_PRELOAD and not (
    SECURE_HSTS_INCLUDE_SUBDOMAINS and SECURE_HSTS_SECONDS >= 60 * 60 * 24 * 365
):
    raise ImproperlyConfigured(
        "SECURE_HSTS_PRELOAD=1 needs SECURE_HSTS_INCLUDE_SUBDOMAINS=1 and SECURE_HSTS_SECONDS of "
        "a year (31536000) or more: the browsers' preload list takes only such a domain."
    )
if SECURE_SSL_REDIRECT and _site.scheme != "https":
    raise ImproperlyConfigured(
        f"SITE_URL is {SITE_URL!r}, but the site sends every browser to https "
        "(SECURE_SSL_REDIRECT): links, agent files and QR codes would name http. Make SITE_URL "
        "https://, or set SECURE_SSL_REDIRECT=0 for a site served over plain http."
    )
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=SECURE_BY_DEFAULT)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
if env_bool("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Everything comes from this origin: no inline script or style, no third party, no framing.
SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "media-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
    "microphone=(), payment=(), usb=(), browsing-topics=()"
)
# Request bodies: forms are small; a progress file may be up to 5 MB.
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
MAX_REQUEST_BYTES = 6 * 1024 * 1024

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG or TESTING
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Spaced repetition (see practice/scheduling.py for why there are no learning steps by default).
FSRS_DESIRED_RETENTION = env_float("FSRS_DESIRED_RETENTION", 0.9)
FSRS_LEARNING_STEPS = [int(s) for s in env_list("FSRS_LEARNING_STEPS")]  # seconds
FSRS_RELEARNING_STEPS = [int(s) for s in env_list("FSRS_RELEARNING_STEPS")]  # seconds
FSRS_MAXIMUM_INTERVAL = env_int("FSRS_MAXIMUM_INTERVAL", 36500)  # days
FSRS_ENABLE_FUZZING = env_bool("FSRS_ENABLE_FUZZING", default=not TESTING)
# Anonymous learners idle for longer than this are removed by `manage.py prune_learners`.
LEARNER_IDLE_DAYS = env_int("LEARNER_IDLE_DAYS", 400)
# Rate limits for writes: (per browser, per address, window in seconds); a whole school may
# share one address, and an IPv6 address counts as its /64 (its /48 for "adopt": see ratelimit).
# RATE_LIMIT_SCALE multiplies them, for load tests.
_scale = env_int("RATE_LIMIT_SCALE", 1)
RATE_LIMITS = {
    "answer": (60 * _scale, 600 * _scale, 60),
    "report": (5 * _scale, 30 * _scale, 600),
    "import": (10 * _scale, 60 * _scale, 3600),
    # Answers imported from files, per address in a day: a class moving its progress fits, a
    # loop of fresh browsers cannot fill the database (each file may hold 40,000 answers).
    "imported_answers": (0, 100_000 * _scale, 24 * 3600),
    "adopt": (10 * _scale, 30 * _scale, 3600),
    "api_check": (0, 300 * _scale, 60),
    # Downloading one's progress is rare; a loop of the largest exports would tie up workers.
    "export": (20 * _scale, 120 * _scale, 3600),
    # Failed sign-ins to /admin/: per name typed (whether an account has it or not; a browser is
    # no limit to a guesser), per address, in 15 minutes; then the login page says how long to
    # wait. Not scaled: a load test does not sign in.
    "admin_login": (5, 20, 15 * 60),
}
# Sessions signed in to an account (editors and superusers in /admin/) end after 12 hours
# without an admin page, and 14 days after sign-in at the latest (lightmysky.middleware.
# staff_session_middleware); anonymous learners' sessions keep SESSION_COOKIE_AGE.
STAFF_SESSION_IDLE_SECONDS = 12 * 60 * 60
STAFF_SESSION_MAX_SECONDS = 14 * 24 * 60 * 60
# Where a sign-in lands when its "next" address is missing or points off the site.
LOGIN_REDIRECT_URL = "admin:index"

# Rate-limit counters live in a table of their own in the database: shared by every process,
# never evicted, counted atomically; `manage.py prune_counters` deletes ended windows. With
# CACHE_URL=redis://host:6379/0 they live in that Redis instead (keys expire with their window;
# run it with maxmemory-policy noeviction so that none is evicted early).
#
# Two caches. "default" is per process, or shared through CACHE_URL (redis://, or db:// with
# createcachetable). "pages" holds rendered pages and lesson data keyed by the content version:
# each process keeps its own, which is correct because an edit of the content changes the key
# and a new release starts new processes. A developer's edit of a template or of code changes
# neither, so under DEBUG (`make run`) pages are not kept; the tests keep them, to test them.
CACHE_URL = env_str("CACHE_URL")
CACHE_KEY_PREFIX = env_str("CACHE_KEY_PREFIX", "lightmysky")
RATE_LIMIT_REDIS_URL = ""
if CACHE_URL.startswith(("redis://", "rediss://")):
    try:
        import redis  # noqa: F401
    except ImportError:
        raise ImproperlyConfigured(
            "CACHE_URL is redis://… but the redis client is not installed: "
            "/srv/lightmysky/venv/bin/pip install 'lightmysky[redis]' (or 'redis>=5')."
        ) from None
    _default_cache = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": CACHE_URL,
        # A Redis that does not answer fails a call in a second instead of hanging a worker.
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
    RATE_LIMIT_REDIS_URL = CACHE_URL
    # Sessions are read from the shared cache, and written to it and to the database (Django's
    # cached_db, where a Redis that fails is a cache miss: lightmysky/session_store.py).
    SESSION_ENGINE = "lightmysky.session_store"
elif CACHE_URL.startswith("db://"):
    _default_cache = {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "django_cache",
    }
elif CACHE_URL:
    raise ImproperlyConfigured(f"CACHE_URL must start with redis:// or db://, not {CACHE_URL!r}.")
else:
    _default_cache = {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "default",
    }
# Rendered pages and lesson data: how many each process keeps. A lesson takes about three
# entries; a whole catalogue should fit, or its pages are rebuilt in turn.
PAGE_CACHE_ENTRIES = env_int("PAGE_CACHE_ENTRIES", 5000)
CACHES = {
    "default": _default_cache | {"KEY_PREFIX": CACHE_KEY_PREFIX},
    "pages": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "pages",
        "KEY_PREFIX": CACHE_KEY_PREFIX,
        "OPTIONS": {"MAX_ENTRIES": PAGE_CACHE_ENTRIES},
    }
    if TESTING or not DEBUG
    else {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
}
# The proxies in front of gunicorn, as comma-separated networks: nginx on this machine (the
# default, loopback), and a load balancer in front of it if there is one. From a peer in them,
# X-Forwarded-For is read from the right, past every trusted address, to the client's
# (lightmysky/lib/addresses.py); from any other peer the header is ignored, so a client that
# reaches gunicorn directly cannot choose the address its rate limits and /metrics judge.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", "127.0.0.1/32,::1/128")
try:
    TRUSTED_PROXY_NETWORKS = [ipaddress.ip_network(c, strict=False) for c in TRUSTED_PROXIES]
except ValueError as _error:
    raise ImproperlyConfigured(
        f"TRUSTED_PROXIES must be comma-separated networks like 127.0.0.1/32,10.0.0.0/8: {_error}"
    ) from None
# Replaced by TRUSTED_PROXIES. Still set, they are not obeyed, and `manage.py check` (and so
# `migrate`) names them (lightmysky/checks.py); a running site is not stopped by them.
REPLACED_PROXY_VARIABLES = {
    name: os.environ[name]
    for name in ("TRUST_X_FORWARDED_FOR", "TRUSTED_PROXY_HOPS")
    if name in os.environ
}
TRUSTED_PROXIES_SET = "TRUSTED_PROXIES" in os.environ
# How long an answer form stays valid, in seconds.
ATTEMPT_TOKEN_MAX_AGE = env_int("ATTEMPT_TOKEN_MAX_AGE", 60 * 60 * 24)

# Without collectstatic (development and tests) whitenoise serves straight from the source folders.
WHITENOISE_USE_FINDERS = DEBUG or TESTING
WHITENOISE_AUTOREFRESH = DEBUG or TESTING
# Hashed names are cached for good (whitenoise marks them immutable); the few unhashed ones
# (favicon.svg, robots) keep whitenoise's short default, so a changed one is seen within a minute.

# Errors reach the operator: by mail to ADMINS (comma-separated addresses) through EMAIL_URL
# (smtp://USER:PASSWORD@HOST:587 for STARTTLS, smtps://…:465 for TLS), and/or to Sentry.
ADMINS = env_list("ADMINS")
SERVER_EMAIL = DEFAULT_FROM_EMAIL = env_str("SERVER_EMAIL", "lightmysky@localhost")
EMAIL_URL = env_str("EMAIL_URL")
_email = urlsplit(EMAIL_URL or "smtp://localhost:25")  # Django's default: the local MTA
if _email.scheme not in {"smtp", "smtps"}:
    raise ImproperlyConfigured(f"EMAIL_URL must start with smtp:// or smtps://, not {EMAIL_URL!r}.")
_email_port = _email.port or (465 if _email.scheme == "smtps" else 587)
MAILERS = {
    "default": {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {
            "host": _email.hostname or "localhost",
            "port": _email_port,
            "username": unquote(_email.username or ""),
            "password": unquote(_email.password or ""),
            "use_ssl": _email.scheme == "smtps",
            "use_tls": _email.scheme == "smtp" and _email_port != 25,
            # Error mails go out from a thread of their own (lightmysky.errormail); a mail
            # server that does not answer is given up on after this many seconds.
            "timeout": 10,
        },
    }
}
SENTRY_DSN = env_str("SENTRY_DSN")
if SENTRY_DSN:
    try:
        import sentry_sdk
    except ImportError:
        raise ImproperlyConfigured(
            "SENTRY_DSN is set but sentry-sdk is not installed: "
            "/srv/lightmysky/venv/bin/pip install 'sentry-sdk>=2'."
        ) from None
    # No cookies or addresses: a learner's session is their progress.
    sentry_sdk.init(
        dsn=SENTRY_DSN,
        environment=env_str("SENTRY_ENVIRONMENT", "production"),
        send_default_pii=False,
        traces_sample_rate=env_float("SENTRY_TRACES_SAMPLE_RATE", 0.0),
    )

# Logs go to stdout: one line per request from lightmysky.requests, as JSON with LOG_FORMAT=json.
# Every line about a request carries its id (lightmysky.middleware), tracebacks included.
LOG_FORMAT = env_choice("LOG_FORMAT", "text", ("text", "json"))
# One error mail per kind of error (exception and view) per this many seconds; more of that kind
# are only logged. Mails go out from a thread of their own, never inside the failing request.
ERROR_MAIL_INTERVAL = env_int("ERROR_MAIL_INTERVAL", 300)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"()": "lightmysky.lib.logs.TextFormatter"},
        "json": {"()": "lightmysky.lib.logs.JsonFormatter"},
    },
    "filters": {
        "with_request_id": {"()": "lightmysky.lib.logs.WithRequestId"},
        "without_traceback": {"()": "lightmysky.lib.logs.WithoutTraceback"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "stream": sys.stdout,
            "formatter": "json" if LOG_FORMAT == "json" else "text",
            "filters": ["with_request_id"],
        },
        "mail_admins": {
            "class": "lightmysky.errormail.BackgroundAdminEmailHandler",
            "level": "ERROR",
        },
    },
    "root": {
        "handlers": ["console"],
        "level": env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
    },
    "loggers": {
        # One mail handler (it mails only with ADMINS set) for all of Django's errors, in place
        # of Django's default mail handler (two would mail twice) and of its console handler
        # (root has one).
        "django": {"handlers": ["mail_admins"], "level": "INFO"},
        # Requests are logged once, by lightmysky.requests; Django's own lines would repeat them.
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        "lightmysky.requests": {"level": "WARNING" if TESTING else "INFO"},
        # A request for a host not in ALLOWED_HOSTS (scanners, probes by address): one line.
        "django.security.DisallowedHost": {
            "handlers": ["console"],
            "filters": ["without_traceback"],
            "propagate": False,
        },
        # A filter or a popup field an editor typed into an admin address: told to them in a
        # 400 (lightmysky.admin), a line here, and nothing for the operators to act on.
        **{
            f"django.security.{name}": {
                "handlers": ["console"],
                "filters": ["without_traceback"],
                "propagate": False,
            }
            for name in ("DisallowedModelAdminLookup", "DisallowedModelAdminToField")
        },
    },
}

# Prometheus metrics at /metrics (lightmysky/metrics.py), answered only to the addresses in these
# comma-separated networks (others get 404); loopback by default. Behind nginx a visitor's
# request is judged by the address nginx reports (TRUSTED_PROXIES), never by nginx's own.
METRICS_ALLOWED_CIDRS = env_list("METRICS_ALLOWED_CIDRS", "127.0.0.1/32,::1/128")
try:
    METRICS_ALLOWED_NETWORKS = [
        ipaddress.ip_network(c, strict=False) for c in METRICS_ALLOWED_CIDRS
    ]
except ValueError as _error:
    raise ImproperlyConfigured(
        f"METRICS_ALLOWED_CIDRS must be comma-separated networks like 10.0.0.0/8: {_error}"
    ) from None
# The folder where each worker process keeps its counts, so that /metrics reports the whole
# server: gunicorn.conf.py makes one at start. Unset (runserver, manage.py), each process counts
# alone, in memory.
METRICS_DIR = env_str("METRICS_DIR")

# Where uploads (lesson videos) are kept. Unset, or file://: MEDIA_ROOT on this server's disk,
# served by nginx (several servers must share that folder: docs/scaling.md). s3://BUCKET/PREFIX:
# object storage through django-storages (`pip install 'django-storages[s3]'`), with
# ?endpoint_url=https://… for another S3 service than Amazon's, &region_name=…, and
# &custom_domain=media.example.org for a CDN or public name in front of the bucket. Videos are
# linked without signatures (rendered pages are cached), so the bucket (or the CDN) must let
# anyone read them; boto3 takes its keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
MEDIA_STORAGE_URL = env_str("MEDIA_STORAGE_URL")
_media = urlsplit(MEDIA_STORAGE_URL)
if _media.scheme == "s3":
    try:
        import storages  # noqa: F401
    except ImportError:
        raise ImproperlyConfigured(
            "MEDIA_STORAGE_URL is s3://… but django-storages is not installed: "
            "/srv/lightmysky/venv/bin/pip install 'django-storages[s3]>=1.14'."
        ) from None
    _media_options = dict(parse_qsl(_media.query))
    if _unknown := set(_media_options) - {"endpoint_url", "region_name", "custom_domain"}:
        raise ImproperlyConfigured(
            f"MEDIA_STORAGE_URL: unknown option(s) {sorted(_unknown)}; "
            "use endpoint_url, region_name or custom_domain."
        )
    if not _media.netloc:
        raise ImproperlyConfigured("MEDIA_STORAGE_URL must name its bucket: s3://BUCKET/PREFIX.")
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": _media.netloc,
            "location": _media.path.strip("/"),
            "querystring_auth": False,
            "file_overwrite": False,
        }
        | _media_options,
    }
    # Videos now come from the bucket's origin: the Content Security Policy must allow it.
    if "custom_domain" in _media_options:
        _media_origins = [f"https://{_media_options['custom_domain']}"]
    elif "endpoint_url" in _media_options:
        _endpoint = urlsplit(_media_options["endpoint_url"])
        _media_origins = [f"{_endpoint.scheme}://{_endpoint.netloc}"]
    else:
        _region = _media_options.get("region_name")
        _media_origins = [f"https://{_media.netloc}.s3.amazonaws.com"] + (
            [f"https://{_media.netloc}.s3.{_region}.amazonaws.com"] if _region else []
        )
    SECURE_CSP["media-src"] = [*SECURE_CSP["media-src"], *_media_origins]
elif _media.scheme not in {"", "file"}:
    raise ImproperlyConfigured(
        f"MEDIA_STORAGE_URL must be file:// (MEDIA_ROOT on disk) or s3://BUCKET/PREFIX, "
        f"not {MEDIA_STORAGE_URL!r}."
    )

# Lesson videos are uploaded in /admin/ only: there a request may carry a real video (a few
# minutes of 720p is 20 to 60 MB); everywhere else the small MAX_REQUEST_BYTES above holds.
# A larger video gets a form error saying so; nginx's location for a lesson's add and change
# pages must allow at least ADMIN_MAX_REQUEST_BYTES (docs/deploy.md, section 6).
LESSON_VIDEO_MAX_MB = env_int("LESSON_VIDEO_MAX_MB", 200)
LESSON_VIDEO_MAX_BYTES = LESSON_VIDEO_MAX_MB * 1024 * 1024
# Twice the video limit, so that a video somewhat too large still reaches the form's message.
ADMIN_MAX_REQUEST_BYTES = 2 * LESSON_VIDEO_MAX_BYTES
