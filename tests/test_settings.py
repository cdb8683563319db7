"""Settings read the way operators write them."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from lightmysky.settings import database_from_url
from tests.test_site import run_django_check


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
    "DATABASE_URL": "sqlite:////tmp/lightmysky-settings-check.sqlite3",
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
    ],
)
def test_without_debug_the_site_refuses_a_risky_setting(change, message):
    result = run_django_check(**(PRODUCTION | change))
    assert result.returncode != 0
    assert message in result.stderr


def test_the_documented_production_settings_start():
    result = run_django_check(**PRODUCTION)
    assert result.returncode == 0, result.stderr


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
