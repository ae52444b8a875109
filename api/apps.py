import warnings

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    label = "api"
    verbose_name = "Client API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from api import signal_handlers  # noqa: F401

        # The password grant is kept on purpose, for Mastodon's apps (settings:
        # SILENCED_SYSTEM_CHECKS says why); the toolkit would warn at every log-in.
        warnings.filterwarnings(
            "ignore",
            message="The OAuth 2.0 resource owner password credentials grant",
            category=DeprecationWarning,
        )
