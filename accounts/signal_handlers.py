"""Receivers of Django's log-in and log-out signals (connected in AccountsConfig.ready)."""

from typing import Any

from django.http import HttpRequest

from accounts import sessions


def record_session(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "session"):
        sessions.record_login(request=request, user=user)


def forget_session(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None and user is not None and hasattr(request, "session"):
        sessions.forget(user_id=user.pk, session_key=request.session.session_key)
