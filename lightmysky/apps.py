from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class LightMySkyConfig(AppConfig):
    name = "lightmysky"
    verbose_name = "LightMySky"

    def ready(self) -> None:
        from django.core.signals import got_request_exception, request_started
        from django.db.backends.signals import connection_created

        from lightmysky import checks  # noqa: F401  (registers them)
        from lightmysky.health import loaded_migrations
        from lightmysky.lib import sqlitefile
        from lightmysky.metrics import count_database_error

        got_request_exception.connect(count_database_error, dispatch_uid="metrics-database-errors")
        # A SQLite file replaced under the running site is reopened, not written to in vain.
        connection_created.connect(sqlitefile.remember_file, dispatch_uid="sqlite-file-opened")
        request_started.connect(sqlitefile.reopen_if_replaced, dispatch_uid="sqlite-file-replaced")

        # What /readyz judges: the migrations of the code this process started with.
        loaded_migrations()


class LimitedAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with LightMySky's admin site (lightmysky/admin_site.py)."""

    default = False  # not the configuration of the `lightmysky` app itself
    default_site = "lightmysky.admin_site.LimitedAdminSite"
