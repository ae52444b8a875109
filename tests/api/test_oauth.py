"""OAuth 2 as Mastodon's clients use it: registering an app, the code grant with PKCE
(and the out-of-band page), the password and client-credentials grants, form and JSON
bodies, revocation, and the metadata document."""

import base64
import hashlib
import re
import secrets

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from api.models import OUT_OF_BAND
from tests.conftest import PASSWORD
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def register(client, **fields):
    body = {"client_name": "Tusky", "redirect_uris": OUT_OF_BAND, "scopes": "read write follow"}
    return client.post("/api/v1/apps", {**body, **fields})  # a form, as Mastodon.py sends


def pkce_pair():
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorize(client, app, *, redirect_uri=OUT_OF_BAND, scope="read write", **extra):
    """Open the consent page and allow: the response to the consent form."""
    params = {
        "client_id": app["client_id"],
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": scope,
        **extra,
    }
    page = client.get("/oauth/authorize", params)
    assert page.status_code == 200, page.content
    hidden = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.content.decode()))
    hidden.pop("csrfmiddlewaretoken", None)
    return client.post("/oauth/authorize", {**hidden, "allow": "Authorize"})


def test_an_app_registers_with_a_form_or_json_and_gets_its_secret_once(client):
    answer = register(client, website="https://tusky.example")
    assert answer.status_code == 200
    app = answer.json()
    assert app["name"] == "Tusky" and app["scopes"] == ["read", "write", "follow"]
    assert app["redirect_uris"] == [OUT_OF_BAND] and app["vapid_key"] == ""
    assert len(app["client_secret"]) > 30 and app["client_id"]
    as_json = client.post(
        "/api/v1/apps/",
        {"client_name": "Elk", "redirect_uris": ["https://elk.example/cb", "elk://cb"]},
        content_type="application/json",
    )
    assert as_json.status_code == 200
    assert as_json.json()["redirect_uris"] == ["https://elk.example/cb", "elk://cb"]
    assert as_json.json()["scopes"] == ["read"]


@pytest.mark.parametrize(
    "fields",
    [
        {"scopes": "read bogus"},
        {"redirect_uris": "javascript:alert(1)"},
        {"redirect_uris": "no-scheme"},
        {"client_name": ""},
    ],
)
def test_an_app_with_a_bad_field_is_a_422(client, fields):
    answer = register(client, **fields)
    assert answer.status_code == 422
    assert "error" in answer.json() and "details" in answer.json()


def test_the_code_flow_with_pkce_logs_in_shows_the_code_and_echoes_the_scopes(client):
    app = register(client).json()
    user = UserFactory(username="dana")
    verifier, challenge = pkce_pair()
    params = {
        "client_id": app["client_id"],
        "redirect_uri": OUT_OF_BAND,
        "response_type": "code",
        "scope": "read write",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    signed_out = client.get("/oauth/authorize", params)
    assert signed_out.status_code == 302
    assert signed_out["Location"].startswith(reverse("accounts:login") + "?next=")
    client.force_login(user)
    shown = authorize(client, app, code_challenge=challenge, code_challenge_method="S256")
    assert shown.status_code == 200
    code = re.search(r'value="([^"]+)" id="authorization-code"', shown.content.decode()).group(1)
    token = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "redirect_uri": OUT_OF_BAND,
    }
    refused = client.post("/oauth/token", {**token, "code_verifier": "wrong" * 10})
    assert refused.status_code == 400
    # A fresh code: a refused exchange may have spent the first.
    shown = authorize(client, app, code_challenge=challenge, code_challenge_method="S256")
    code = re.search(r'value="([^"]+)" id="authorization-code"', shown.content.decode()).group(1)
    granted = client.post("/oauth/token", {**token, "code": code, "code_verifier": verifier})
    assert granted.status_code == 200, granted.content
    body = granted.json()
    assert body["token_type"] == "Bearer" and body["scope"] == "read write"
    assert body["expires_in"] > 300 * 24 * 3600  # months, not hours
    me = client.get(
        "/api/v1/accounts/verify_credentials",
        headers={"Authorization": f"Bearer {body['access_token']}"},
    )
    assert me.status_code == 200 and me.json()["username"] == "dana"


def test_the_consent_form_is_a_signed_in_form_with_csrf(client):
    app = register(client).json()
    user = UserFactory()
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(user)
    allowed = {
        "client_id": app["client_id"],
        "redirect_uri": OUT_OF_BAND,
        "response_type": "code",
        "scope": "read",
        "allow": "Authorize",
    }
    forged = guarded.post("/oauth/authorize", allowed)
    assert forged.status_code == 403 and b"authorization-code" not in forged.content
    anonymous = Client().post("/oauth/authorize", allowed)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    page = guarded.get("/oauth/authorize", {k: v for k, v in allowed.items() if k != "allow"})
    token = guarded.cookies[settings.CSRF_COOKIE_NAME].value
    shown = guarded.post("/oauth/authorize", {**allowed, "csrfmiddlewaretoken": token})
    assert page.status_code == 200 and b"authorization-code" in shown.content


def test_the_plain_pkce_method_is_refused(client):
    app = register(client).json()
    client.force_login(UserFactory())
    answer = authorize(client, app, code_challenge="x" * 50, code_challenge_method="plain")
    assert answer.status_code == 400
    assert b"authorization-code" not in answer.content


def test_the_code_flow_redirects_to_a_registered_uri_and_denying_says_so(client):
    app = register(client, redirect_uris="https://client.example/cb").json()
    client.force_login(UserFactory())
    allowed = authorize(client, app, redirect_uri="https://client.example/cb", state="s1")
    assert allowed.status_code == 302
    assert re.match(r"https://client\.example/cb\?code=[^&]+&state=s1", allowed["Location"])
    other = client.get(
        "/oauth/authorize",
        {
            "client_id": app["client_id"],
            "redirect_uri": "https://evil.example/cb",
            "response_type": "code",
            "scope": "read",
        },
    )
    assert other.status_code == 400  # never redirected to an unregistered URI


def test_an_app_may_not_be_granted_more_than_it_registered(client):
    app = register(client, scopes="read").json()
    client.force_login(UserFactory())
    asked = client.get(
        "/oauth/authorize",
        {
            "client_id": app["client_id"],
            "redirect_uri": OUT_OF_BAND,
            "response_type": "code",
            "scope": "read write",
        },
    )
    assert asked.status_code == 400 and b"authorization-code" not in asked.content


def test_the_password_grant_takes_a_username_or_an_email_as_form_or_json(client):
    app = register(client).json()
    user = UserFactory(username="erin")
    from tests.factories import set_email

    set_email(user, "Erin@Example.com")
    base = {
        "grant_type": "password",
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "password": PASSWORD,
        "scope": "read write follow",
    }
    by_name = client.post("/oauth/token", {**base, "username": "Erin"})
    assert by_name.status_code == 200, by_name.content
    assert by_name.json()["scope"] == "read write follow"
    by_email = client.post(
        "/oauth/token/", {**base, "username": "erin@example.com"}, content_type="application/json"
    )
    assert by_email.status_code == 200, by_email.content
    wrong = client.post("/oauth/token", {**base, "username": "erin", "password": "nope"})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"


def test_the_password_grant_refuses_an_account_with_two_factor(client, monkeypatch):
    app = register(client).json()
    user = UserFactory(username="frank")
    from accounts import twofactor

    monkeypatch.setattr(twofactor, "is_enabled", lambda checked: checked.pk == user.pk)
    answer = client.post(
        "/oauth/token",
        {
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": "frank",
            "password": PASSWORD,
        },
    )
    assert answer.status_code == 400


def test_client_credentials_give_an_app_token_with_no_user(client):
    app = register(client).json()
    answer = client.post(
        "/oauth/token",
        {
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "scope": "read",
        },
    )
    assert answer.status_code == 200, answer.content
    headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
    mine = client.get("/api/v1/apps/verify_credentials", headers=headers)
    assert mine.status_code == 200 and mine.json()["name"] == "Tusky"
    assert "client_secret" not in mine.json()
    no_user = client.get("/api/v1/accounts/verify_credentials", headers=headers)
    assert no_user.status_code == 422 and no_user.json()["error"]
    assert client.get("/api/v1/timelines/public", headers=headers).status_code == 200


def test_a_revoked_token_is_a_401(client):
    app = register(client).json()
    UserFactory(username="gina")
    token = client.post(
        "/oauth/token",
        {
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": "gina",
            "password": PASSWORD,
        },
    ).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/accounts/verify_credentials", headers=headers).status_code == 200
    revoked = client.post(
        "/oauth/revoke",
        {"client_id": app["client_id"], "client_secret": app["client_secret"], "token": token},
    )
    assert revoked.status_code == 200 and revoked.json() == {}
    gone = client.get("/api/v1/accounts/verify_credentials", headers=headers)
    assert gone.status_code == 401 and gone.json() == {"error": "The access token is invalid"}


def test_the_metadata_document_advertises_the_endpoints_grants_and_s256(client):
    answer = client.get("/.well-known/oauth-authorization-server")
    assert answer.status_code == 200
    doc = answer.json()
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "password", "client_credentials"} <= set(
        doc["grant_types_supported"]
    )
    assert doc["token_endpoint"] == "http://testserver/oauth/token"
    assert {"read", "write", "follow", "push", "read:statuses"} <= set(doc["scopes_supported"])


def test_cors_lets_browser_apps_call_the_api_and_the_token_endpoint(client):
    origin = {"Origin": "https://elk.example"}
    for path in ("/api/v1/instance", "/oauth/token", "/.well-known/oauth-authorization-server"):
        preflight = client.options(
            path, headers={**origin, "Access-Control-Request-Method": "POST"}
        )
        assert preflight["Access-Control-Allow-Origin"] == "*", path
    page = client.get("/", headers=origin)
    assert "Access-Control-Allow-Origin" not in page
