"""Two things every ``/api/`` request gets, whatever answers it.

- ``/api/v1/instance/`` is ``/api/v1/instance``: Mastodon's router ignores a
  trailing slash and its clients send both, while Django's routes name one
  form. The slash goes before the URL is resolved, so each endpoint is declared
  once (and once in the OpenAPI document).
- An error is JSON: what answers outside the API's handlers (ninja's 405 for a
  method an endpoint lacks, Django's 400 for a bad host, the 503 page while the
  database is away) is turned into ``{"error": ...}`` with its status and
  headers kept, so a client never parses an HTML page.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

PREFIX = "/api/"
KEPT_HEADERS = ("Allow", "Retry-After", "Link")


class ApiPaths:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if not path.startswith(PREFIX):
            return self.get_response(request)
        if path.endswith("/") and len(path) > len(PREFIX):
            request.path_info = path.rstrip("/")
        response = self.get_response(request)
        if response.status_code < 400 or response.get("Content-Type", "").startswith(
            "application/json"
        ):
            return response
        answer = JsonResponse({"error": response.reason_phrase}, status=response.status_code)
        for header in KEPT_HEADERS:
            if response.has_header(header):
                answer[header] = response[header]
        return answer
