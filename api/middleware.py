"""``/api/v1/instance/`` is ``/api/v1/instance``: Mastodon's clients send both.

Mastodon's router ignores a trailing slash; Django's routes name one form.
This strips it from an API path before the URL is resolved, so each endpoint
is declared once (and once in the OpenAPI document).
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

PREFIX = "/api/"


class TrailingSlash:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path.startswith(PREFIX) and path.endswith("/") and len(path) > len(PREFIX):
            request.path_info = path.rstrip("/")
        return self.get_response(request)
