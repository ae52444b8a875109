"""Receivers of Django's log-in and log-out signals (connected in AccountsConfig.ready)."""

from typing import Any

from django.contrib import messages
from django.http import HttpRequest

from accounts import deletion, sessions


def record_session(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "session"):
        sessions.record_login(request=request, user=user)


def forget_session(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None and user is not None and hasattr(request, "session"):
        sessions.forget(user_id=user.pk, session_key=request.session.session_key)


def cancel_deletion(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """Logging in during the grace period keeps the account (accounts.deletion)."""
    cancelled = user.deletion_due_at is not None and deletion.cancel_deletion(user=user)
    if cancelled and request is not None:
        messages.info(
            request, "Welcome back: your account's deletion was cancelled.", fail_silently=True
        )
