from django.apps import AppConfig
from django.urls import register_converter

from accounts.converters import UsernameConverter


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Here, not in one app's urls.py: relations and posts both route /@<username>/...,
        # and whichever URLconf is imported first needs the converter.
        register_converter(UsernameConverter, "username")

        from django.contrib.auth.signals import user_logged_in, user_logged_out

        from accounts import archive, exports, signal_handlers

        # The profile first: every app above adds its parts in its own ready().
        archive.register(exports.PROFILE)

        user_logged_in.connect(
            signal_handlers.record_session, dispatch_uid="accounts.record_session"
        )
        user_logged_in.connect(
            signal_handlers.cancel_deletion, dispatch_uid="accounts.cancel_deletion"
        )
        user_logged_out.connect(
            signal_handlers.forget_session, dispatch_uid="accounts.forget_session"
        )
