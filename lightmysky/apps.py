from django.apps import AppConfig


class LightMySkyConfig(AppConfig):
    name = "lightmysky"
    verbose_name = "LightMySky"

    def ready(self) -> None:
        from django.core.signals import got_request_exception
        from django.db.backends.signals import connection_created

        from lightmysky.health import loaded_migrations
        from lightmysky.lib.prepared import close_after_stale_plan, plan_prepared_statements_once
        from lightmysky.metrics import count_database_error

        got_request_exception.connect(count_database_error, dispatch_uid="metrics-database-errors")
        got_request_exception.connect(close_after_stale_plan, dispatch_uid="stale-prepared-plans")
        connection_created.connect(plan_prepared_statements_once, dispatch_uid="generic-plans")

        # What /readyz judges: the migrations of the code this process started with.
        loaded_migrations()
