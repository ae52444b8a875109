from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from accounts.services import refresh_last_active

HEALTH_CHECK_PATH = "/healthz"  # feed_project.urls


class LastActiveMiddleware:
    """Refresh the signed-in user's last-active time (at most once an hour).

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
