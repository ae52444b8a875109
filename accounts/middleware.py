from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from accounts.services import refresh_last_active


class LastActiveMiddleware:
    """Refresh the signed-in user's last-active time (at most once an hour).

    It runs before the view, so a reader coming back after a long absence is
    known to be back before their feed is read.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            refresh_last_active(user=user)
        return self.get_response(request)
