from collections.abc import Callable
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_cache_control

from accounts import sessions
from accounts.services import refresh_last_active

# The session of a log-in that passed a second factor carries this (accounts.views).
TWO_FACTOR_DONE = "accounts_2fa_verified"

HEALTH_CHECK_PATH = "/healthz"  # feed_project.urls


class LastActiveMiddleware:
    """Refresh the signed-in user's last-active time (at most once an hour),
    and the session's last-seen time on the sessions page (every few minutes).

    It runs before the view, so a reader coming back after a long absence is
    known to be back before their feed is read.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # A health check must not read the session (or write) when the
        # database it is about to report on is down.
        if request.path_info == HEALTH_CHECK_PATH:
            return self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            refresh_last_active(user=user)
            sessions.touch(request)
        return self.get_response(request)


class ModeratorTwoFactorMiddleware:
    """With REQUIRE_2FA_FOR_MODERATORS, staff reach the admin only from a session
    that passed a second factor: others are sent to set it up (or log in with it)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.admin_prefix: str | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.REQUIRE_2FA_FOR_MODERATORS:
            self.admin_prefix = self.admin_prefix or reverse("admin:index")
            user = getattr(request, "user", None)
            if (
                request.path_info.startswith(self.admin_prefix)
                and user is not None
                and user.is_authenticated
                and user.is_staff
                and not request.session.get(TWO_FACTOR_DONE)
            ):
                messages.warning(
                    request,
                    "The admin needs two-factor authentication: set it up here, "
                    "or log out and in again with your code.",
                )
                return redirect("account_settings:security")
        return self.get_response(request)


class PrivateCacheMiddleware:
    """Mark every response to a signed-in request ``Cache-Control: private``.

    A signed-in page shows one person's feed, notifications and CSRF token: a
    shared cache (a CDN, a corporate proxy) must never keep it for someone
    else. A response that says how it may be cached already is left alone.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.has_header("Cache-Control"):
            return response  # before reading the session: /healthz must not need it
        # After the view: log-in and log-out change who the request belongs to.
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, private=True)
        return response


class TimeZoneMiddleware:
    """Pages in the signed-in user's time zone (``User.time_zone``), else the site's.

    The user is loaded already (LastActiveMiddleware): no query of its own.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        zone = ""
        if request.path_info != HEALTH_CHECK_PATH and user is not None and user.is_authenticated:
            zone = user.time_zone
        try:
            if zone:
                timezone.activate(ZoneInfo(zone))
            return self.get_response(request)
        finally:
            timezone.deactivate()
