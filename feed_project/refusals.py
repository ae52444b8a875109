"""Refusals: what a service or selector raises when a user may not have what they asked.

Rules about what someone may do live in services and selectors, so that every
front door says the same: the HTML views let Django answer these (each is also
the exception its handlers already map: ``Http404``, ``PermissionDenied``,
``BadRequest``, with the standard error pages), and a JSON API maps ``Refused``
to its error in one place. The message is the user's to read.
"""

from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404


class Refused(Exception):
    """The site refuses what a user asked; ``message`` says why, in words for them."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(Refused, Http404):
    """404: as far as this user knows it does not exist (gone, hidden, blocked either way)."""


class Forbidden(Refused, PermissionDenied):
    """403: it is there for this user, who may not do this to it."""


class Invalid(Refused, BadRequest):
    """400: what was asked cannot be done by anyone in the asker's place."""
