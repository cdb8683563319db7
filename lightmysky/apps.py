from django.apps import AppConfig


class LightMySkyConfig(AppConfig):
    name = "lightmysky"
    verbose_name = "LightMySky"

    def ready(self) -> None:
        from lightmysky.health import loaded_migrations

        # What /readyz judges: the migrations of the code this process started with.
        loaded_migrations()
