from django.apps import AppConfig


class LightMySkyConfig(AppConfig):
    name = "lightmysky"
    verbose_name = "LightMySky"
