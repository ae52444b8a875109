"""Every API error as Mastodon's ``{"error": "..."}`` JSON, in one place: a client
never gets an HTML page or a 500 for something it sent.

The site's refusals (``feed_project.refusals``) map to Mastodon's statuses:
NotFound 404, Forbidden 403, Invalid 422 (a request that cannot be done, in
Mastodon's status for it). A request ninja cannot read (a field of the wrong
type, a malformed body) is a 422 with ``details``; a page that is not there
under ``/api/`` is a 404 (``not_found``).

The OpenAPI document says so for every operation (``document_errors``): each may
answer 401, 403, 404, 422 or 429 with the ``Error`` schema, so a client (and the
schema fuzz test) can hold every answer to the document.
"""

import logging
from typing import Any

from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.common import no_append_slash
from ninja import NinjaAPI
from ninja.errors import HttpError
from ninja.errors import ValidationError as NinjaValidationError

from feed_project.errors import RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE, database_unreachable
from feed_project.refusals import Forbidden, Invalid, NotFound, Refused

logger = logging.getLogger(__name__)

STATUS_OF_REFUSAL = ((NotFound, 404), (Forbidden, 403), (Invalid, 422))

# Mastodon's error entity: a message, and for a 422 each field's messages.
ERROR_SCHEMA = {
    "title": "Error",
    "type": "object",
    "properties": {
        "error": {"type": "string"},
        "details": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
    "required": ["error"],
}
# Sent when rate limits are on (RATELIMIT_ENABLED), hence not required.
RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": {
        "description": "Requests allowed in the window of the limit nearest to",
        "schema": {"type": "integer"},
    },
    "X-RateLimit-Remaining": {
        "description": "Requests left in that window",
        "schema": {"type": "integer"},
    },
    "X-RateLimit-Reset": {
        "description": "When that window ends",
        "schema": {"type": "string", "format": "date-time"},
    },
}
RETRY_AFTER_HEADER = {"description": "Seconds to wait", "schema": {"type": "integer"}}
ERROR_STATUSES = {
    "401": "No usable access token",
    "403": "The token lacks the scope, or the action is not allowed",
    "404": "Record not found",
    "422": "The request could not be done, with each field's messages in details",
    "429": "Over a rate limit: Retry-After says how many seconds to wait",
}


def error(message: str, status: int, **extra: object) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


class Unprocessable(Invalid):
    """A 422 with the fields at fault: ``details`` maps each to its messages."""

    def __init__(self, message: str, details: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.details = details


class RateLimited(Exception):
    """Over one of the site's rate limits (``feed_project.ratelimits``): a 429."""

    def __init__(self, wait: int) -> None:
        super().__init__(wait)
        self.wait = wait


def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = error("Too many requests", 429)
    response["Retry-After"] = str(exc.wait)
    return response


def _refused(request: HttpRequest, exc: Refused) -> HttpResponse:
    status = next((code for kind, code in STATUS_OF_REFUSAL if isinstance(exc, kind)), 422)
    details = getattr(exc, "details", None)
    return error(exc.message, status, **({"details": details} if details else {}))


def _unreadable(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    details: dict[str, list[str]] = {}
    for problem in exc.errors:
        where = problem.get("loc") or ("request",)
        field = str(where[-1])  # the field, without where ninja read it from
        details.setdefault(field, []).append(str(problem.get("msg", "invalid")))
    summary = "; ".join(f"{field}: {', '.join(msgs)}" for field, msgs in details.items())
    return error(f"Validation failed: {summary}", 422, details=details)


def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if exc.status_code == 401:
        return error("The access token is invalid", 401)
    if exc.status_code == 400:  # a body ninja could not read: bad input, so Mastodon's 422
        return error(f"Validation failed: {exc.message}", 422, details={"body": [exc.message]})
    return error(exc.message, exc.status_code)


def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    """Django's own refusals raised below a service, a database that is not there (503,
    as the site's pages answer), and a bug: logged, and still JSON."""
    if isinstance(exc, Http404):
        return error("Record not found", 404)
    if isinstance(exc, PermissionDenied):
        return error(str(exc) or "This action is not allowed", 403)
    if isinstance(exc, BadRequest | SuspiciousOperation):
        return error(str(exc) or "The request could not be read", 422)
    if isinstance(exc, DatabaseError) and database_unreachable(exc):
        response = error(UNAVAILABLE_MESSAGE, 503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    logger.exception("API request failed: %s %s", request.method, request.path)
    return error("Something went wrong on our side", 500)


def document_errors(document: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with the ``Error`` schema and the error answers on every
    operation (those an operation documents itself are kept), and on every answer the
    rate limit's headers (``api.middleware``)."""
    components = document.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    answer = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in ERROR_STATUSES.items():
                responses.setdefault(status, {"description": description, "content": answer})
            for status, response in responses.items():
                headers = response.setdefault("headers", {})
                headers.update(RATE_LIMIT_HEADERS)
                if status == "429":
                    headers["Retry-After"] = RETRY_AFTER_HEADER
    return document


def install(api: NinjaAPI) -> None:
    """The handlers, most particular first (ninja looks them up by the exception's class),
    and the errors in the OpenAPI document."""
    make_document = api.get_openapi_schema

    def get_openapi_schema(**kwargs: Any) -> Any:
        return document_errors(make_document(**kwargs))

    api.get_openapi_schema = get_openapi_schema  # type: ignore[method-assign]
    api.add_exception_handler(Refused, _refused)
    api.add_exception_handler(RateLimited, _rate_limited)
    api.add_exception_handler(NinjaValidationError, _unreadable)
    api.add_exception_handler(HttpError, _http_error)
    api.add_exception_handler(Http404, _unexpected)
    api.add_exception_handler(Exception, _unexpected)


@no_append_slash
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any other path under /api/: JSON, and no redirect to a slashed URL."""
    return error("Record not found", 404)
