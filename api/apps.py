from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    label = "api"
    verbose_name = "Client API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from api import signal_handlers  # noqa: F401
