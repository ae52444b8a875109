"""PUT and PATCH forms under ``/api/`` read as a POST's: Django parses a form body for
POST only, and Mastodon's clients send forms with PUT (an image's description, an
edit) and PATCH (a profile).

The body is read first and kept, so that django-ninja, which looks at
``request.body`` before its parser reads the form, still can; a form that cannot
be parsed is an empty one (the endpoint then answers what is missing), as
Django leaves a POST's.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError

PREFIX = "/api/"
METHODS = ("PUT", "PATCH")
FORMS = ("multipart/form-data", "application/x-www-form-urlencoded")


class FormBodies:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            request.method in METHODS
            and request.path_info.startswith(PREFIX)
            and request.content_type in FORMS
        ):
            _read_form(request)
        return self.get_response(request)


def _read_form(request: HttpRequest) -> None:
    method = request.method
    request.body  # noqa: B018  (read and kept: the form is parsed from the copy)
    request.method = request.META["REQUEST_METHOD"] = "POST"
    try:
        request._load_post_and_files()
    except MultiPartParserError:
        pass  # Django has left the form empty
    finally:
        request.method = request.META["REQUEST_METHOD"] = method
