"""OAuth 2 as Mastodon's clients speak it, on django-oauth-toolkit.

- ``/oauth/authorize``: the site's log-in (the session's), then a consent page in
  the site's look; ``urn:ietf:wg:oauth:2.0:oob`` shows the code instead of
  redirecting, for apps with no redirect of their own.
- ``/oauth/token``: the code grant (PKCE with S256 when the app sends a
  challenge; Mastodon.py and older apps send none), the password grant, client
  credentials, refresh; form or JSON bodies, as Mastodon takes both.
- ``/oauth/revoke`` and ``/.well-known/oauth-authorization-server``.

Tokens last ``OAUTH2_PROVIDER["ACCESS_TOKEN_EXPIRE_SECONDS"]`` (settings).
"""

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from oauth2_provider import views as oauth_views
from oauth2_provider.oauth2_backends import OAuthLibCore
from oauth2_provider.oauth2_validators import OAuth2Validator

from accounts import twofactor, unique_names
from accounts.models import User, username_validator
from api.models import OUT_OF_BAND
from api.scopes import SCOPES
from feed_project.ratelimits import retry_after

GRANT_TYPES = ["authorization_code", "password", "client_credentials", "refresh_token"]


def account_for_password(login: str, password: str) -> User | None:
    """The account a password grant signs in: by username or e-mail (Mastodon's clients
    send the e-mail), active, not being deleted, without two-factor (a password alone
    must not pass where the site's log-in asks for a code)."""
    if "@" in login:
        found = unique_names.users_with_email(login).first()
    else:
        try:  # the log-in form's rule: look-alike letters never reach the lookup
            username_validator(login)
        except ValidationError:
            return None
        found = unique_names.users_named(login).first()
    if found is None or not found.is_active or found.deletion_due_at is not None:
        return None
    if not found.check_password(password) or twofactor.is_enabled(found):
        return None
    return found


class Validator(OAuth2Validator):
    """The toolkit's validator, signing in password grants the site's way."""

    def validate_user(self, username, password, client, request, *args, **kwargs) -> bool:
        user = account_for_password(str(username or ""), str(password or ""))
        if user is None:
            return False
        request.user = user
        return True


def json_items(request: HttpRequest) -> list[tuple[str, str]]:
    """The parameters of a JSON body (an object), as a form's would be."""
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    return [(str(key), str(value)) for key, value in body.items() if value is not None]


class FormOrJsonCore(OAuthLibCore):
    """Reads the token and revoke requests' parameters from a form or a JSON body."""

    def extract_body(self, request: HttpRequest) -> list[tuple[str, str]]:
        if request.content_type == "application/json":
            return json_items(request)
        return super().extract_body(request)


def _grant_type(request: HttpRequest) -> str | None:
    if request.content_type == "application/json":
        return dict(json_items(request)).get("grant_type")
    return request.POST.get("grant_type")


def _oob_code(uri: str) -> tuple[str | None, str | None]:
    query = parse_qs(urlsplit(uri).query)
    return (query.get("code") or [None])[0], (query.get("error") or [None])[0]


class AuthorizeView(oauth_views.AuthorizationView):
    """The consent page (``templates/api/authorize.html``), behind the site's log-in."""

    template_name = "api/authorize.html"

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        if not redirect_to.startswith(OUT_OF_BAND):
            return super().redirect(redirect_to, application)
        code, error = _oob_code(redirect_to)
        context = {"code": code, "error": error, "application": application}
        return render(self.request, "api/authorized.html", context, status=200 if code else 400)


def _oauth_error(response: HttpResponse) -> HttpResponse:
    """The toolkit's error bodies are JSON already; give any empty one Mastodon's shape."""
    if response.status_code >= 400 and not response.content:
        return JsonResponse({"error": "invalid_request"}, status=response.status_code)
    return response


@method_decorator(csrf_exempt, name="dispatch")
class TokenView(oauth_views.TokenView):
    """The toolkit's token endpoint, with the log-in's rate limit on password grants."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if _grant_type(request) == "password":
            wait = retry_after(request, "login")  # a password grant is a log-in
            if wait is not None:
                response = JsonResponse({"error": "Too many requests"}, status=429)
                response["Retry-After"] = str(wait)
                return response
        return _oauth_error(super().post(request, *args, **kwargs))


@method_decorator(csrf_exempt, name="dispatch")
class RevokeView(oauth_views.RevokeTokenView):
    """The toolkit's revocation, answering as Mastodon does."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:
            return JsonResponse({})  # Mastodon answers an empty object
        return _oauth_error(response)


@never_cache
@require_safe
def server_metadata(request: HttpRequest) -> JsonResponse:
    """RFC 8414's document, as Mastodon 4.3 serves it: clients find the endpoints,
    the grants and PKCE's method here."""

    def url(name: str) -> str:
        return request.build_absolute_uri(reverse(name))

    return JsonResponse(
        {
            # As the toolkit's ``iss`` in each authorization response: no slash.
            "issuer": request.build_absolute_uri("/").rstrip("/"),
            "authorization_endpoint": url("oauth:authorize"),
            "token_endpoint": url("oauth:token"),
            "revocation_endpoint": url("oauth:revoke"),
            "app_registration_endpoint": request.build_absolute_uri("/api/v1/apps"),
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": GRANT_TYPES,
            # Every app has a secret (``POST /api/v1/apps``), and sends it.
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }
    )
