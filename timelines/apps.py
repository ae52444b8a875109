from django.apps import AppConfig


class TimelinesConfig(AppConfig):
    name = "timelines"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from timelines import signals

        signals.connect()
