"""Three things every ``/api/`` request gets, whatever answers it.

- ``/api/v1/instance/`` is ``/api/v1/instance``: Mastodon's router ignores a
  trailing slash and its clients send both, while Django's routes name one
  form. The slash goes before the URL is resolved, so each endpoint is declared
  once (and once in the OpenAPI document).
- Mastodon's rate limit: every request counts against the API's budget
  (``feed_project.ratelimits.api_usage``: per token, per IP without one); over
  it the answer is a 429 with ``Retry-After`` and no endpoint runs. Every answer
  carries ``X-RateLimit-Limit``, ``-Remaining`` and ``-Reset`` for the limit the
  request is nearest to: the budget, or for an action the site limits on its
  own (posting, following, liking: ``KIND_OF_REQUEST``) that action's limit, as
  Mastodon reports its stricter limits.
- An error is JSON: what answers outside the API's handlers (ninja's 405 for a
  method an endpoint lacks, Django's 400 for a bad host, the 503 page while the
  database is away) is turned into ``{"error": ...}`` with its status and
  headers kept, so a client never parses an HTML page.
"""

import re
from collections.abc import Callable
from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse, JsonResponse

from feed_project.ratelimits import Usage, action_usage, api_usage

PREFIX = "/api/"
KEPT_HEADERS = ("Allow", "Retry-After", "Link")

# The API's requests that the site limits as one of its actions (the same counters
# as its pages), by method and path.
KIND_OF_REQUEST = (
    ("POST", re.compile(r"^/api/v1/statuses$"), "post"),
    (
        "POST",
        re.compile(r"^/api/v1/statuses/[^/]+/(favourite|unfavourite|reblog|unreblog)$"),
        "like",
    ),
    (
        "POST",
        re.compile(r"^/api/v1/accounts/[^/]+/(follow|unfollow|block|unblock|mute|unmute)$"),
        "follow",
    ),
)


def _action_of(request: HttpRequest) -> str | None:
    for method, path, action in KIND_OF_REQUEST:
        if request.method == method and path.match(request.path_info):
            return action
    return None


def _nearest(request: HttpRequest, budget: Usage | None) -> Usage | None:
    """The budget, or the request's own action's limit when fewer are left of it."""
    action = _action_of(request)
    own = action_usage(request, action) if action else None
    if own is None or (budget is not None and budget.remaining <= own.remaining):
        return budget
    return own


def _report(response: HttpResponse, usage: Usage | None) -> HttpResponse:
    if usage is not None:
        reset = datetime.fromtimestamp(usage.reset_at, UTC)
        response["X-RateLimit-Limit"] = str(usage.limit)
        response["X-RateLimit-Remaining"] = str(usage.remaining)
        response["X-RateLimit-Reset"] = reset.isoformat(timespec="milliseconds").replace(
            "+00:00", "Z"
        )
    return response


def _as_json(response: HttpResponse) -> HttpResponse:
    if response.status_code < 400 or response.get("Content-Type", "").startswith(
        "application/json"
    ):
        return response
    answer = JsonResponse({"error": response.reason_phrase}, status=response.status_code)
    for header in KEPT_HEADERS:
        if response.has_header(header):
            answer[header] = response[header]
    return answer


class ApiPaths:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if not path.startswith(PREFIX):
            return self.get_response(request)
        if path.endswith("/") and len(path) > len(PREFIX):
            request.path_info = path.rstrip("/")
        budget = api_usage(request)
        if budget is not None and budget.wait is not None:
            refused = JsonResponse({"error": "Too many requests"}, status=429)
            refused["Retry-After"] = str(budget.wait)
            return _report(refused, budget)
        response = _as_json(self.get_response(request))
        return _report(response, _nearest(request, budget))
