from django.apps import AppConfig


class TimelinesConfig(AppConfig):
    name = "timelines"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.signals import account_erasing
        from timelines import erasure, signals

        signals.connect()
        account_erasing.connect(erasure.on_account_erasing, dispatch_uid="timelines.erasure")
