"""Who calls the API: an OAuth bearer token, never the site's session cookie.

``Token(scope)`` is a django-ninja authenticator: no token, an unknown,
expired or revoked one, or one whose account can no longer sign in is a 401;
a token without the endpoint's scope is a 403 (``api.scopes.grants``); an app's
own token (client credentials) where a user is needed is a 422, as on
Mastodon. It sets ``request.user`` to the token's owner and records them
active as the site's middleware does (``accounts.services.refresh_last_active``,
at most once an interval), so a reader back after days gets their feed rebuilt
as on the site.
"""

import hashlib
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer
from oauth2_provider.models import get_access_token_model

from accounts.services import refresh_last_active
from api.scopes import grants
from feed_project.refusals import Forbidden, Invalid

NEEDS_USER = "This method requires an authenticated user"
ANONYMOUS = "anonymous"  # what an optional authenticator hands ninja when no token came


def access_token(token: str) -> Any:
    """The live access token of this bearer value, with its user and app, or None."""
    checksum = hashlib.sha256(token.encode()).hexdigest()
    found = (
        get_access_token_model()
        .objects.select_related("user", "application")
        .filter(token_checksum=checksum)
        .first()
    )
    if found is None or found.expires <= timezone.now():
        return None
    return found


class Token(HttpBearer):
    """A bearer token with ``scope``; ``optional``: no token at all reads as a visitor
    (public endpoints), but a bad one is still refused."""

    def __init__(self, scope: str, *, optional: bool = False, user: bool = True) -> None:
        super().__init__()
        self.scope = scope
        self.optional = optional
        self.user = user

    def __call__(self, request: HttpRequest) -> Any:
        request.user = AnonymousUser()  # the session's user never counts here
        if self.optional and not request.headers.get(self.header):
            return ANONYMOUS
        return super().__call__(request)

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = access_token(token)
        if found is None:
            return None
        owner = found.user
        if owner is not None and (not owner.is_active or owner.deletion_due_at is not None):
            return None
        if self.scope and not grants(found.scope.split(), self.scope):
            raise Forbidden("This action is outside the authorized scopes")
        if owner is None:
            if self.user and not self.optional:
                raise Invalid(NEEDS_USER)
            return found
        request.user = owner
        refresh_last_active(user=owner)
        return found
