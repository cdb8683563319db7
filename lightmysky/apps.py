from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class LightMySkyConfig(AppConfig):
    name = "lightmysky"
    verbose_name = "LightMySky"

    def ready(self) -> None:
        from django.core.signals import got_request_exception

        from lightmysky import checks  # noqa: F401  (registers them)
        from lightmysky.health import loaded_migrations
        from lightmysky.metrics import count_database_error

        got_request_exception.connect(count_database_error, dispatch_uid="metrics-database-errors")

        # What /readyz judges: the migrations of the code this process started with.
        loaded_migrations()


class LimitedAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with LightMySky's admin site (lightmysky/admin.py)."""

    default = False  # not the configuration of the `lightmysky` app itself
    default_site = "lightmysky.admin.LimitedAdminSite"
