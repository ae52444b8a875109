"""The apps a person let use their account, and taking that back.

An app is authorized while it holds a token of the person's (a code-flow or
password sign-in made it); the settings page (``api.views``) lists those apps
and revokes one: every token, refresh token and pending code of that app for
that person goes, so its next request is a 401. Another person's app, or one
never authorized, is NotFound to them.
"""

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_grant_model, get_refresh_token_model

from feed_project.refusals import NotFound


@dataclass(frozen=True)
class AuthorizedApp:
    id: int
    name: str
    website: str
    scopes: list[str]
    authorized_at: datetime


def _web_address(website: str) -> str:
    """The app's website when it is one a page may link to (registration takes any text)."""
    return website if urlsplit(website).scheme.lower() in ("http", "https") else ""


def authorized_apps(*, user_id: int) -> list[AuthorizedApp]:
    """The apps holding a live token of this person's, the latest authorized first:
    one query, each app once with the scopes of all its tokens."""
    tokens = (
        get_access_token_model()
        .objects.filter(user_id=user_id, application__isnull=False, expires__gt=timezone.now())
        .select_related("application")
        .only("scope", "created", "application__name", "application__website")
    )
    apps: dict[int, AuthorizedApp] = {}
    for token in tokens:
        app = token.application
        seen = apps.get(app.pk)
        scopes = set(token.scope.split()) | set(seen.scopes if seen else ())
        first = min(token.created, seen.authorized_at) if seen else token.created
        apps[app.pk] = AuthorizedApp(
            app.pk, app.name, _web_address(app.website), sorted(scopes), first
        )
    return sorted(apps.values(), key=lambda app: app.authorized_at, reverse=True)


def revoke_app(*, user_id: int, application_id: int) -> None:
    """End every token and code of this app for this person (refresh tokens first: an
    access token's deletion leaves its refresh token orphaned)."""
    mine = {"user_id": user_id, "application_id": application_id}
    tokens = get_access_token_model().objects.filter(**mine)
    if not tokens.exists():
        raise NotFound("No app of yours has that id.")
    get_refresh_token_model().objects.filter(**mine).delete()
    tokens.delete()
    get_grant_model().objects.filter(**mine).delete()
