"""What a request that raised answers: 503 while PostgreSQL is unreachable, else the 500 page.

Django turns an exception raised anywhere in a request (a view, or any
middleware: the session loaded by the authentication middleware is the first
query of most requests) into a response by calling ``handler500`` inside the
``except`` block, so the exception is ``sys.exception()`` here. A database
that is restarting, crashed or cut off is not a bug of the page: the answer is
503 with ``Retry-After`` and a short "back in a moment" page, or a JSON body
for views marked ``feed_project.http.answers_json`` and for clients that ask
for JSON. Nothing is half-written: every change is one transaction
(``transaction.atomic`` in the services), which PostgreSQL rolls back when the
connection goes. Connections come back by themselves: with
``CONN_HEALTH_CHECKS`` Django closes, at the end of a request, a connection
that raised and no longer answers, and pings a reused one before its first
query, so the first request after the server is back opens a new one.

Each such request is logged as one line: the traceback of a refused connection
says nothing more, and the one Django would print (``log_response``) carries
the ``AttributeError`` of the session's lazy load as its context ("During
handling of the above exception"), which is how ``SessionBase._get_session``
finds out that the session is not loaded yet, not a second failure.
"""

import logging
import sys

from django import db
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.urls import Resolver404, resolve
from django.views import defaults

logger = logging.getLogger(__name__)

# A fast restart takes about a second and a crash's recovery a few: retrying
# sooner than this would mostly meet the same outage.
RETRY_AFTER_SECONDS = 5

# SQLSTATEs that mean the server is not there to answer: the connection class
# (08: refused, lost, closed) and a server shutting down, crashing or starting
# (57P01-57P03). psycopg gives no SQLSTATE for a connection that failed or was
# lost on the client's side.
_UNREACHABLE_STATES = ("08", "57P01", "57P02", "57P03")
UNAVAILABLE_MESSAGE = "The site cannot reach its database just now: try again in a moment."


def database_unreachable(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what it was raised from) says the database cannot be reached.

    Other database errors (a statement timeout, a deadlock, a constraint) stay
    500s: retrying them would meet the same bug.
    """
    for _ in range(5):  # the chain Django and a view may wrap it in, never a cycle
        if exc is None:
            return False
        if isinstance(exc, db.InterfaceError):
            return True
        if isinstance(exc, db.OperationalError):
            state = getattr(exc.__cause__, "sqlstate", "")
            return state is None or state.startswith(_UNREACHABLE_STATES)
        exc = exc.__cause__ or exc.__context__
    return False


def wants_json(request: HttpRequest) -> bool:
    """A JSON view's request, or a client that prefers JSON to HTML."""
    try:
        match = resolve(request.path_info, getattr(request, "urlconf", None))
    except Resolver404:
        match = None
    if match is not None and getattr(match.func, "answers_json", False):
        return True
    return request.get_preferred_type(["text/html", "application/json"]) == "application/json"


def unavailable(request: HttpRequest) -> HttpResponse:
    """503 with ``Retry-After``; rendered without the request's context, which needs
    the database (the user, the messages)."""
    if wants_json(request):
        response: HttpResponse = JsonResponse(
            {"error": UNAVAILABLE_MESSAGE, "retry_after": RETRY_AFTER_SECONDS}, status=503
        )
    else:
        page = loader.get_template("503.html").render({"retry_after": RETRY_AFTER_SECONDS})
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    # Not kept by any cache, and answered before PrivateCacheMiddleware would read
    # the session (accounts.middleware) to mark it private.
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: 503 when the database is unreachable, else the 500 page (JSON for
    a JSON view)."""
    exc = sys.exception()
    if database_unreachable(exc):
        response = unavailable(request)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        logger.error(
            "database unreachable: %s %s answered 503: %s", request.method, request.path, reason
        )
        response._has_been_logged = True  # type: ignore[attr-defined]  # one line, above
        return response
    if wants_json(request):
        return JsonResponse({"error": "Something went wrong on our side."}, status=500)
    return defaults.server_error(request)
