"""``POST /api/v1/apps``: a client registers itself, and gets its id and secret.

Registration is open, as on Mastodon: an app is nobody's until a user signs
in through it. Its redirect URIs may be web addresses, an app's own scheme
(``elk://``, ``com.example.app:/oauth``) or ``urn:ietf:wg:oauth:2.0:oob``; no
scheme a browser would run (``javascript:``, ``data:``).
"""

from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest
from ninja import Router, Schema
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import get_application_model

from api import schemas, scopes
from api.auth import Token
from api.errors import Unprocessable
from api.models import OUT_OF_BAND

router = Router(tags=["apps"])
REFUSED_SCHEMES = {"javascript", "data", "vbscript", "file", "blob"}


class NewApp(Schema):
    client_name: str
    redirect_uris: str | list[str] = OUT_OF_BAND
    scopes: str = "read"
    website: str | None = None


def _invalid(field: str, message: str) -> Unprocessable:
    return Unprocessable(f"Validation failed: {message}", {field: [message]})


def redirect_uris(given: str | list[str]) -> list[str]:
    """The URIs, one per line or space (Mastodon.py joins them with newlines), checked."""
    uris = given.split() if isinstance(given, str) else [u for part in given for u in part.split()]
    if not uris:
        raise _invalid("redirect_uris", "Redirect URI can't be blank")
    for uri in uris:
        parts = urlsplit(uri)
        if uri != OUT_OF_BAND and (
            not parts.scheme or parts.scheme.lower() in REFUSED_SCHEMES or "#" in uri
        ):
            raise _invalid("redirect_uris", f"Redirect URI is not valid: {uri[:200]}")
    return uris


def app_entity(app: Any, secret: str | None = None) -> dict[str, Any]:
    uris = app.redirect_uris.split()
    shown: dict[str, Any] = {
        "id": str(app.pk),
        "name": app.name,
        "website": app.website or None,
        "scopes": app.scopes.split(),
        "redirect_uri": "\n".join(uris),
        "redirect_uris": uris,
        "vapid_key": "",
    }
    if secret is not None:
        shown |= {
            "client_id": app.client_id,
            "client_secret": secret,
            "client_secret_expires_at": 0,
        }
    return shown


@router.post("/v1/apps", auth=None, response=schemas.App)
def create_app(request: HttpRequest, body: NewApp) -> dict[str, Any]:
    wanted = body.scopes.split() or scopes.DEFAULT_SCOPES
    if scopes.unknown(wanted):
        raise _invalid("scopes", f"Unknown scopes: {' '.join(scopes.unknown(wanted))[:200]}")
    if not body.client_name.strip() or len(body.client_name) > 255:
        raise _invalid("client_name", "Name must be 1 to 255 characters")
    model = get_application_model()
    secret = generate_client_secret()
    app = model.objects.create(
        name=body.client_name.strip(),
        redirect_uris=" ".join(redirect_uris(body.redirect_uris)),
        client_type=model.CLIENT_CONFIDENTIAL,
        authorization_grant_type=model.GRANT_AUTHORIZATION_CODE,
        client_secret=secret,
        scopes=" ".join(wanted),
        website=(body.website or "")[:2000],
    )
    return app_entity(app, secret)


@router.get(
    "/v1/apps/verify_credentials",
    auth=Token("", user=False),
    response=schemas.App,
    exclude_none=True,
)
def verify_app(request: HttpRequest) -> dict[str, Any]:
    """The app of the token, without its secret."""
    return app_entity(request.auth.application)
