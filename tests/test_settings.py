"""Settings read the way operators write them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from lightmysky.settings import database_from_url
from tests.test_site import CHECK_DATABASE_URL, run_django_check


def test_a_sqlite_url_with_three_slashes_is_relative_and_with_four_absolute():
    assert database_from_url("sqlite:///./prod.sqlite3")["NAME"] == Path("prod.sqlite3")
    assert database_from_url("sqlite:///var/site.sqlite3")["NAME"] == Path("var/site.sqlite3")
    assert database_from_url("sqlite:////srv/site.sqlite3")["NAME"] == Path("/srv/site.sqlite3")


def test_a_percent_encoded_unix_socket_is_the_postgresql_host():
    config = database_from_url("postgres://sky@%2Fvar%2Frun%2Fpostgresql/sky")
    assert (config["HOST"], config["NAME"], config["USER"]) == ("/var/run/postgresql", "sky", "sky")


def test_conn_max_age_in_the_url_sets_persistent_connections_not_a_driver_option():
    config = database_from_url("postgres://sky@db/sky?conn_max_age=60&sslmode=require")
    assert config["CONN_MAX_AGE"] == 60
    assert config["OPTIONS"]["sslmode"] == "require"
    assert "conn_max_age" not in config["OPTIONS"]
    assert database_from_url("sqlite:////srv/site.sqlite3?conn_max_age=0")["CONN_MAX_AGE"] == 0


def test_postgresql_uses_djangos_own_backend_with_kept_checked_connections():
    config = database_from_url("postgres://sky@db/sky")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert config["CONN_MAX_AGE"] == 600 and config["CONN_HEALTH_CHECKS"] is True
    assert "server_side_binding" not in config["OPTIONS"]
    assert "prepare_threshold" not in config["OPTIONS"]


def test_postgresql_connections_send_keepalives_unless_the_url_says_otherwise():
    options = database_from_url("postgres://sky@db/sky")["OPTIONS"]
    assert (options["keepalives"], options["keepalives_idle"]) == (1, 60)
    options = database_from_url("postgres://sky@db/sky?keepalives_idle=20&keepalives=0")["OPTIONS"]
    assert (options["keepalives"], options["keepalives_idle"]) == (0, 20)


def test_a_conn_max_age_that_is_not_a_number_is_explained():
    with pytest.raises(ImproperlyConfigured, match="conn_max_age in DATABASE_URL"):
        database_from_url("postgres://sky@db/sky?conn_max_age=forever")


PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k" * 60,
    "ALLOWED_HOSTS": "lightmysky.example.org",
    "SITE_URL": "https://lightmysky.example.org",
    "DATABASE_URL": CHECK_DATABASE_URL,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"SECRET_KEY": "short"}, "SECRET_KEY is too short or still the example's placeholder"),
        (
            {"SECRET_KEY": "change-me-to-a-long-random-string-of-fifty-or-more-characters"},
            "SECRET_KEY is too short or still the example's placeholder",
        ),
        ({"DATABASE_URL": ""}, "DATABASE_URL is not set"),
        ({"SITE_URL": "lightmysky.example.org"}, "SITE_URL must be an origin with its scheme"),
        # The operators' walk of 2026-12-06: each of these started without a word.
        ({"SITE_URL": "https://lightmysky.example.org/sub"}, "with its scheme and no path"),
        ({"SITE_URL": "http://lightmysky.example.org"}, "Make SITE_URL https://"),
        ({"SECURE_COOKIES": "y"}, "SECURE_COOKIES must be 1 or 0 (or true/false"),
        ({"SECURE_SSL_REDIRECT": "enabled"}, "SECURE_SSL_REDIRECT must be 1 or 0"),
        (
            {"SECURE_HSTS_PRELOAD": "1"},
            "SECURE_HSTS_PRELOAD=1 needs SECURE_HSTS_INCLUDE_SUBDOMAINS",
        ),
        ({"LOG_LEVEL": "loud"}, "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT must be one of text, json, not 'xml'"),
    ],
)
def test_without_debug_the_site_refuses_a_risky_setting(change, message):
    result = run_django_check(**(PRODUCTION | change))
    assert result.returncode != 0
    assert message in result.stderr


def test_the_documented_production_settings_start():
    result = run_django_check(**PRODUCTION)
    assert result.returncode == 0, result.stderr


def test_a_plain_http_site_and_words_in_any_case_are_taken():
    code = (
        "from django.conf import settings; import logging; "
        "print('RESULT', settings.LOG_FORMAT, logging.getLogger().level, "
        "settings.SESSION_COOKIE_SECURE)"
    )
    plain_http = {"SITE_URL": "http://lightmysky.example.org", "SECURE_SSL_REDIRECT": "off"}
    result = run_django_check(
        "shell",
        "-c",
        code,
        **PRODUCTION | plain_http,
        LOG_FORMAT="JSON",
        LOG_LEVEL="debug",
        SECURE_COOKIES="No",
    )
    assert "RESULT json 10 False" in result.stdout, result.stderr
    # An empty value means the default, as for every other variable.
    result = run_django_check("shell", "-c", code, **PRODUCTION, LOG_FORMAT="", LOG_LEVEL="")
    assert "RESULT text 20 True" in result.stdout, result.stderr


def test_earlier_secret_keys_are_read_as_fallbacks():
    code = "from django.conf import settings; print('RESULT', settings.SECRET_KEY_FALLBACKS)"
    result = run_django_check("shell", "-c", code, **PRODUCTION, SECRET_KEY_FALLBACKS="a" * 50)
    assert f"RESULT ['{'a' * 50}']" in result.stdout, result.stderr


def test_errors_are_mailed_to_admins_through_the_email_url():
    code = (
        "from django.conf import settings as s; "
        "o = s.MAILERS['default']['OPTIONS']; "
        "print('RESULT', s.ADMINS, o['host'], o['port'], o['username'], o['password'], "
        "o['use_tls'], o['use_ssl'], o['timeout'], s.LOGGING['loggers']['django']['handlers'])"
    )
    result = run_django_check(
        "shell",
        "-c",
        code,
        **PRODUCTION,
        ADMINS="ops@example.org,lead@example.org",
        EMAIL_URL="smtp://site:p%40ss@mail.example.org:587",
    )
    assert (
        "RESULT ['ops@example.org', 'lead@example.org'] mail.example.org 587 site p@ss "
        "True False 10 ['mail_admins']"
    ) in result.stdout, result.stderr


def test_a_sentry_dsn_without_sentry_sdk_is_explained():
    try:
        import sentry_sdk  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentry-sdk is installed here")
    result = run_django_check(**PRODUCTION, SENTRY_DSN="https://key@sentry.example.org/1")
    assert result.returncode != 0
    assert "SENTRY_DSN is set but sentry-sdk is not installed" in result.stderr


def test_a_redis_cache_without_the_redis_extra_is_explained(tmp_path):
    # A site installed without `lightmysky[redis]`: the redis package cannot be imported.
    (tmp_path / "redis.py").write_text("raise ImportError('not installed')\n")
    result = run_django_check(
        DEBUG="1", CACHE_URL="redis://127.0.0.1:6379/0", PYTHONPATH=str(tmp_path)
    )
    assert result.returncode != 0
    assert "pip install 'lightmysky[redis]'" in result.stderr


def test_trusted_proxies_that_are_not_networks_are_refused():
    result = run_django_check(**PRODUCTION, TRUSTED_PROXIES="127.0.0.1/32,nginx")
    assert result.returncode != 0
    assert "TRUSTED_PROXIES must be comma-separated networks" in result.stderr


def test_the_replaced_trust_x_forwarded_for_is_named_and_not_obeyed():
    # One nginx on this machine, as the old docs set it up: the default trusts just that.
    code = "from django.conf import settings; print('RESULT', settings.TRUSTED_PROXIES)"
    result = run_django_check("shell", "-c", code, **PRODUCTION, TRUST_X_FORWARDED_FOR="1")
    assert "RESULT ['127.0.0.1/32', '::1/128']" in result.stdout, result.stderr
    check = run_django_check(**PRODUCTION, TRUST_X_FORWARDED_FOR="1", TRUSTED_PROXY_HOPS="1")
    assert check.returncode == 0, check.stderr
    assert "TRUST_X_FORWARDED_FOR is no longer read" in check.stderr
    assert "TRUSTED_PROXY_HOPS is no longer read" in check.stderr


def test_a_load_balancers_hop_stops_migrate_until_trusted_proxies_names_it():
    old = {"TRUST_X_FORWARDED_FOR": "1", "TRUSTED_PROXY_HOPS": "2"}
    result = run_django_check("migrate", "--check", **PRODUCTION, **old)
    assert result.returncode != 0
    assert "TRUSTED_PROXY_HOPS=2 is no longer read. Set TRUSTED_PROXIES" in result.stderr
    named = run_django_check(**PRODUCTION, **old, TRUSTED_PROXIES="127.0.0.1/32,10.0.0.0/24")
    assert named.returncode == 0, named.stderr


@pytest.mark.parametrize(
    ("variable", "nearest"),
    [
        ("ALLOWED_HOST", "ALLOWED_HOSTS"),
        ("DATABASE_ULR", "DATABASE_URL"),
        ("SECRET_KEYS", "SECRET_KEY"),
        ("TRUSTED_PROXIE", "TRUSTED_PROXIES"),
        ("allowed_hosts", "ALLOWED_HOSTS"),
    ],
)
def test_a_misspelt_variable_stops_the_site_with_the_name_meant(variable, nearest):
    result = run_django_check(**PRODUCTION, **{variable: "1"})
    assert result.returncode != 0
    assert f"{variable}: not a variable LightMySky reads; did you mean {nearest}?" in result.stderr


def test_a_misspelt_variable_stops_the_site_in_debug_mode_too():
    result = run_django_check(DEBUG="1", LOGLEVEL="DEBUG")
    assert result.returncode != 0
    assert "LOGLEVEL: not a variable LightMySky reads; did you mean LOG_LEVEL?" in result.stderr


def test_a_django_setting_set_in_the_environment_is_refused_with_the_variable_to_use():
    result = run_django_check(**PRODUCTION, EMAIL_HOST="mail.example.org", TIME_ZONE="UTC")
    assert result.returncode != 0
    assert "EMAIL_HOST: a Django setting, which LightMySky does not read" in result.stderr
    assert "set EMAIL_URL instead." in result.stderr
    assert "TIME_ZONE: a Django setting" in result.stderr


# The shell, the locale, Python and Django; systemd, gunicorn, libpq, boto3, Sentry, proxies;
# the tools and tests of this repository.
ORDINARY_VARIABLES = (
    "PATH HOME USER LOGNAME SHELL TERM PWD OLDPWD SHLVL LANG LANGUAGE LC_ALL LC_CTYPE TZ TMPDIR "
    "EDITOR PAGER MAIL HOSTNAME DISPLAY PYTHONPATH PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE "
    "VIRTUAL_ENV DJANGO_SETTINGS_MODULE DJANGO_COLORS RUN_MAIN "
    "INVOCATION_ID JOURNAL_STREAM NOTIFY_SOCKET LISTEN_FDS LISTEN_PID MAINPID RUNTIME_DIRECTORY "
    "STATE_DIRECTORY CACHE_DIRECTORY LOGS_DIRECTORY CREDENTIALS_DIRECTORY GUNICORN_CMD_ARGS PORT "
    "GUNICORN_FD GUNICORN_PID "
    "PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSSLMODE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY "
    "AWS_DEFAULT_REGION SENTRY_RELEASE HTTP_PROXY HTTPS_PROXY NO_PROXY SSL_CERT_FILE "
    "REQUESTS_CA_BUNDLE REDIS_URL BENCH_DATABASE_URL ADMIN_TIMING_DATABASE_URL TEST_DATABASE_URL "
    "LIGHTMYSKY_SLOW_TESTS LIGHTMYSKY_SCREENSHOTS REQUIRE_BROWSER DEBIAN_FRONTEND CI "
    "GITHUB_ACTIONS RUNNER_DEBUG ACTIONS_CACHE_URL http_proxy https_proxy no_proxy"
)


def test_ordinary_variables_never_stop_the_site():
    # Their own values where this machine has them (PATH must still find things), else "1".
    ordinary = {name: os.environ.get(name, "1") for name in ORDINARY_VARIABLES.split()}
    ordinary["DJANGO_SETTINGS_MODULE"] = "lightmysky.settings"
    result = run_django_check(**PRODUCTION, **ordinary)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "value", ["{key}  # generated 2026-12-05", "{key}\t#old", "{key} #", "abc  # a short one"]
)
def test_a_secret_key_with_an_inline_comment_is_refused(value):
    result = run_django_check(**PRODUCTION | {"SECRET_KEY": value.format(key="k" * 60)})
    assert result.returncode != 0
    assert "SECRET_KEY holds whitespace and then '#': an inline comment?" in result.stderr
    assert "Put the comment on a line of its own" in result.stderr


def test_a_fallback_key_with_an_inline_comment_is_refused():
    result = run_django_check(**PRODUCTION, SECRET_KEY_FALLBACKS="o" * 60 + " # the old key")
    assert result.returncode != 0
    assert "SECRET_KEY_FALLBACKS holds whitespace and then '#'" in result.stderr


def test_a_secret_key_may_hold_a_hash_sign_of_its_own():
    result = run_django_check(**PRODUCTION | {"SECRET_KEY": "k" * 30 + "#" + "k" * 30})
    assert result.returncode == 0, result.stderr


KEPT = (
    "from django.core.cache import caches; caches['pages'].set('page', 1); "
    "print(caches['pages'].get('page'))"
)


def test_under_make_run_pages_are_not_kept_so_a_template_edit_shows_at_once():
    """A newcomer's edit of a template did not show to a visitor: the page was kept, keyed by
    the content's version, which a template edit does not change."""
    developing = run_django_check(
        "shell", "-v0", "-c", KEPT, DEBUG="1", DATABASE_URL=CHECK_DATABASE_URL
    )
    assert developing.stdout.strip() == "None", developing.stderr
    production = run_django_check("shell", "-v0", "-c", KEPT, **PRODUCTION)
    assert production.stdout.strip() == "1", production.stderr
