"""Hardening: every data-changing route needs POST, login and CSRF; headers; deploy check.

Every route of the site (the admin aside) is classified below by its pattern,
converters written ``<>``. A route the resolver has that no list names fails
``test_every_route_is_classified``: whoever adds a view says here what kind it
is, and the tests of that kind then run on it. Every route of the public
contract must exist.
"""

import os
import re
import secrets
import string
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pyotp
import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from accounts import avatar_upload, twofactor
from accounts.models import Invite, RecoveryCode, SignupApplication, TwoFactor, User
from posts import media, uploads
from posts.models import Like, Post, Report
from posts.services import create_post
from relations.models import Followee, Follower
from tests import images
from tests.conftest import PASSWORD
from tests.factories import UserFactory
from tests.private_redis import private_redis
from timelines.models import Conversation

BASE_DIR = Path(__file__).resolve().parents[2]
AUTHORIZED_APP_ID = 4242

# POST only, signed in, with CSRF: a GET is a 405, an anonymous POST goes to log in.
ACTIONS = {
    "posts/new/",
    "posts/<>/delete/",
    "posts/<>/like/",
    "posts/<>/unlike/",
    "posts/<>/repost/",
    "posts/<>/unrepost/",
    "posts/<>/report/",
    "@<>/follow/",
    "@<>/unfollow/",
    "@<>/block/",
    "@<>/unblock/",
    "@<>/mute/",
    "@<>/unmute/",
    "@<>/report/",
    "follow-requests/<>/accept/",
    "@<>/follow-options/",
    "settings/muted-words/<>/delete/",
    "follow-requests/<>/reject/",
    "notifications/read/",
    "accounts/email/resend/",
    "settings/security/2fa/setup/",
    "settings/security/2fa/confirm/",
    "settings/security/2fa/disable/",
    "settings/security/2fa/recovery-codes/",
    "settings/security/sessions/end/",
    "settings/security/sessions/end-others/",
    "settings/apps/<>/revoke/",
}
# A page whose GET shows a form and whose POST changes data: CSRF always; the
# sign-up and log-in forms are for visitors (the log-in's code step, the
# password reset and the e-mail link too: a token, not a login, says who),
# the others need a login.
FORMS_FOR_VISITORS = {
    "accounts/signup/",
    "accounts/login/",
    "accounts/login/code/",
    "accounts/password/reset/",
    "accounts/password/reset/<>/<>/",
    "accounts/verify/<>/",
}
FORMS = {
    "accounts/profile/",
    "accounts/email/",
    "settings/security/password/",
    "settings/invites/",
    "settings/delete/",
    "settings/export/",
    "settings/import/follows/",
    "posts/<>/edit/",
    "settings/muted-words/",
}
# POST only with CSRF, but harmless for a visitor (Django's LogoutView).
LOGOUT = {"accounts/logout/"}
# Pages that only read: GET and HEAD, a POST is a 405.
READ_ONLY = {
    "",
    "search/",
    "notifications/",
    "timeline/new/",
    "suggestions/",
    "posts/<>/",
    "posts/<>/media/<>/",
    "posts/<>/media/<>/thumbnail/",
    "@<>/",
    "@<>/followers/",
    "@<>/following/",
    "healthz",
    "accounts/signup/pending/",
    "accounts/password/reset/sent/",
    "accounts/password/reset/done/",
    "settings/security/",
    "settings/apps/",
    "posts/<>/history/",
    "tags/",
    "tags/<>/",
    "accounts/avatar/<>.svg",
    "accounts/avatar/<>.png",
    "accounts/avatars/<>/<>.webp",
    "accounts/avatars/<>/<>.png",
    "media/uploads/<>/<>/<>/",
    "media/uploads/<>/<>/<>/thumbnail/",
    "public/",
    "follow-requests/",
    "messages/",
    "messages/<>/",
}
# Read-only links for their owner only: GET signed in (anything else is a 404
# or a redirect to log in), POST a 405 (tests/accounts/test_exports.py).
OWNER_LINKS = {"settings/export/download/<>/"}
CHANGES_DATA = ACTIONS | FORMS_FOR_VISITORS | FORMS | LOGOUT
# The client API, /oauth/, the OAuth metadata and nodeinfo: bearer tokens, not the session,
# so no CSRF (tests/api/: no token or a bad one is a 401, a session cookie no token);
# but the consent page, /oauth/authorize, is a signed-in form with CSRF
# (tests/api/test_oauth.py holds it to that).
TOKEN_ROUTES = ("api/", "^api/", "oauth/", "^\\.well-known/", "^nodeinfo/")


def _walk(patterns: list, prefix: str = "") -> list[str]:
    routes = []
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if route.startswith("admin/"):
            continue  # the admin's, and the redirect of its log-in to the site's
        if isinstance(entry, URLResolver):
            routes += _walk(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            routes.append(route)
    return routes


def site_routes() -> set[str]:
    """Every route of the site but the admin's, converters written ``<>``."""
    return {re.sub(r"<[^>]*>", "<>", route) for route in _walk(get_resolver().url_patterns)}


def test_every_route_is_classified():
    classified = CHANGES_DATA | READ_ONLY | OWNER_LINKS
    unclassified = {r for r in site_routes() - classified if not r.startswith(TOKEN_ROUTES)}
    assert not unclassified, (
        f"Routes {sorted(unclassified)} are in no list of tests/feed_project/test_security.py: "
        "say whether each changes data (and how) or only reads."
    )
    assert not (CHANGES_DATA & READ_ONLY)


def test_the_routes_built_so_far_include_the_core_ones():
    built = site_routes()
    assert {"posts/new/", "posts/<>/delete/", "@<>/follow/", "@<>/unfollow/"} <= built
    assert {"accounts/signup/", "accounts/login/", "accounts/logout/"} <= built


def _require(route: str) -> None:
    assert route in site_routes(), f"/{route} is missing"


@pytest.fixture
def world(db):
    """alice acts; bob is the other person; each has a post."""
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    # bob's picture, for the route of uploaded pictures.
    avatar_upload.replace(
        user=bob, picture=avatar_upload.prepare(images.upload("b.png", images.image_bytes("PNG")))
    )
    Conversation.objects.create(user=alice, key=f"{alice.pk}.{bob.pk}", last_key="0" * 16)
    upload = uploads.upload(
        author_id=bob.pk, image=media.prepare(images.upload("c.png", images.image_bytes("PNG")))
    )
    return {
        "upload": upload,
        "alice": alice,
        "bob": bob,
        "alice_post": create_post(author=alice, text="alice's post"),
        "bob_post": create_post(
            author=bob,
            text="bob's post",
            media=media.prepare_all([images.upload("a.jpg", images.image_bytes())], ["alt"]),
        ),
    }


def _url(route: str, world: dict) -> str:
    # Alice deletes and edits her own post; she acts on Bob's.
    if route.startswith("accounts/avatars/"):  # bob's picture, as uploaded or as a PNG
        return f"/accounts/{world['bob'].avatar}".replace(".webp", route[route.rindex(".") :])
    if route.startswith("media/uploads/"):  # bob's image uploaded ahead of its post
        return uploads.upload_path(world["upload"], thumbnail=route.endswith("thumbnail/"))
    post = world["alice_post"] if route.endswith(("delete/", "edit/")) else world["bob_post"]
    if route == "messages/<>/":  # alice's conversation with bob
        return f"/messages/{world['alice'].pk}.{world['bob'].pk}/"
    if route.startswith("settings/muted-words/"):  # a muted word's id
        return "/" + route.replace("<>", "1")
    if route.startswith("settings/apps/"):  # an app Alice authorized (_prepared)
        return "/" + route.replace("<>", str(AUTHORIZED_APP_ID))
    if route.startswith("posts/"):  # the post, then the image's position (media routes)
        return "/" + route.replace("<>", post.pk, 1).replace("<>", "0")
    return "/" + route.replace("<>", "bob")


def _rows() -> dict[str, int]:
    models = {"user": User, "post": Post, "follower": Follower, "followee": Followee}
    models |= {"like": Like, "report": Report, "two-factor": TwoFactor, "invite": Invite}
    models |= {"recovery code": RecoveryCode, "application": SignupApplication}
    counts = {name: model.objects.count() for name, model in models.items()}
    counts["live posts"] = Post.objects.filter(deleted_at__isnull=True).count()
    profiles = User.objects.order_by("pk").values_list(
        "display_name", "bio", "password", "email", "unconfirmed_email", "email_verified_at"
    )
    counts["profiles"] = hash(tuple(profiles))
    return counts


def _csrf_client(user: User | None) -> Client:
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    return client


def _with_token(client: Client) -> str:
    """A CSRF token for this client: the cookie a page with a form sets."""
    client.get("/accounts/signup/" if "_auth_user_id" not in client.session else "/")
    return client.cookies[settings.CSRF_COOKIE_NAME].value


NEW_PASSWORD = "a-brand-new-passphrase-42"
FORM_DATA = {
    "text": "hello",
    "reason": "spam",
    "display_name": "Hacked",
    "bio": "pwned",
    "email": "changed@example.com",
    "password": PASSWORD,
    "old_password": PASSWORD,
    "new_password1": NEW_PASSWORD,
    "new_password2": NEW_PASSWORD,
    "days": "7",
    "max_uses": "1",
    "word": "spoilers",
}


def _prepared(route: str, world: dict) -> dict[str, str]:
    """What a route needs besides FORM_DATA to go through: a code, a permission."""
    alice = world["alice"]
    if route == "settings/security/2fa/confirm/":
        setup = twofactor.start_setup(user=alice)
        return {"code": pyotp.TOTP(setup.secret).now()}
    if route == "settings/invites/":
        alice.user_permissions.add(Permission.objects.get(codename="add_invite"))
    if route == "settings/import/follows/":
        return {"file": SimpleUploadedFile("following.csv", b"username\nbob\n", "text/csv")}
    if route == "settings/apps/<>/revoke/":
        app = get_application_model().objects.create(pk=AUTHORIZED_APP_ID, name="An app")
        get_access_token_model().objects.create(
            user=alice, application=app, token="a-token", expires=timezone.now() + timedelta(1)
        )
    return {}


@pytest.mark.parametrize("route", sorted(ACTIONS))
def test_an_action_refuses_get(route, world):
    _require(route)
    client = Client()
    client.force_login(world["alice"])
    before = _rows()
    assert client.get(_url(route, world)).status_code == 405
    assert _rows() == before


@pytest.mark.parametrize("route", sorted(ACTIONS | FORMS))
def test_an_anonymous_post_is_sent_to_log_in(route, world):
    _require(route)
    before = _rows()
    response = Client().post(_url(route, world), FORM_DATA)
    if response.status_code == 302:
        assert response["Location"].startswith(reverse(settings.LOGIN_URL) + "?next=")
    else:
        assert response.status_code == 403
    assert _rows() == before


@pytest.mark.parametrize("route", sorted(CHANGES_DATA))
def test_a_post_without_csrf_token_is_refused(route, world):
    _require(route)
    user = None if route in FORMS_FOR_VISITORS else world["alice"]
    data = {
        **FORM_DATA,
        "username": "newcomer" if route == "accounts/signup/" else "alice",
        "password": PASSWORD,
        "password1": PASSWORD,
        "password2": PASSWORD,
    }
    before = _rows()
    client = _csrf_client(user)
    response = client.post(_url(route, world), data)
    assert response.status_code == 403
    assert b"That form has expired" in response.content  # templates/403_csrf.html
    assert _rows() == before
    if route == "accounts/login/":
        assert "_auth_user_id" not in client.session
    if route == "accounts/logout/":
        assert client.session.get("_auth_user_id") == str(world["alice"].pk)


@pytest.mark.parametrize("route", sorted(CHANGES_DATA - FORMS_FOR_VISITORS))
def test_the_same_post_with_its_csrf_token_goes_through(route, world):
    """The control of the test above: the 403 was the missing token, not something else."""
    _require(route)
    data = {**FORM_DATA, **_prepared(route, world)}
    client = _csrf_client(world["alice"])
    token = _with_token(client)
    response = client.post(_url(route, world), {**data, "csrfmiddlewaretoken": token})
    assert response.status_code == 302  # every one of them redirects when it goes through


@pytest.mark.parametrize("route", sorted(READ_ONLY))
def test_a_read_only_page_refuses_post_and_answers_get(route, world):
    _require(route)
    client = Client()
    client.force_login(world["alice"])
    before = _rows()
    assert client.post(_url(route, world), FORM_DATA).status_code == 405
    assert client.get(_url(route, world)).status_code == 200
    assert _rows() == before


@pytest.mark.parametrize("route", sorted(OWNER_LINKS))
def test_an_owner_link_refuses_post_and_visitors(route, world):
    _require(route)
    client = Client()
    client.force_login(world["alice"])
    before = _rows()
    assert client.post(_url(route, world), FORM_DATA).status_code == 405
    assert client.get(_url(route, world)).status_code == 404  # not a link of hers
    response = Client().get(_url(route, world))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert _rows() == before


def test_signup_refuses_the_password_password(db):
    data = {"username": "newcomer", "password1": "password", "password2": "password"}
    response = Client().post("/accounts/signup/", data)
    assert response.status_code == 400
    assert "too common" in response.content.decode()
    assert not User.objects.filter(username="newcomer").exists()


@pytest.mark.parametrize("password", ["short1", "12345678901234", "newcomer2024"])
def test_signup_refuses_weak_passwords(db, password):
    data = {"username": "newcomer2024", "password1": password, "password2": password}
    assert Client().post("/accounts/signup/", data).status_code == 400
    assert not User.objects.filter(username="newcomer2024").exists()


CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/@alice/", "/no-such-page/"])
def test_pages_send_the_security_headers(world, path):
    response = Client().get(path)
    policy = {part.strip() for part in response["Content-Security-Policy"].split(";")}
    assert policy == set(CSP.split("; "))
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in response  # only with HTTPS=1


def test_no_template_has_inline_script_or_style():
    """The CSP allows scripts and styles from files only: an inline one would not run."""
    offenders = []
    for template in (BASE_DIR / "templates").rglob("*.html"):
        text = template.read_text()
        for pattern in (r"<script(?![^>]*\bsrc=)[^>]*>", r"<style\b", r"\sstyle=", r"\son\w+="):
            offenders += [f"{template.name}: {m.group(0)}" for m in re.finditer(pattern, text)]
    assert not offenders


def _production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "HTTPS", "ALLOWED_HOSTS"}}
    alphabet = string.ascii_letters + string.digits + "!@#%^&*(-_=+)"
    env.update(
        DJANGO_SETTINGS_MODULE="feed_project.settings",
        SECRET_KEY="".join(secrets.choice(alphabet) for _ in range(50)),
        ALLOWED_HOSTS="example.com",
        **extra,
    )
    return env


def test_check_deploy_is_clean_in_the_production_settings():
    """With a cache Redis as it comes (its defaults keep inbox caches compact)."""
    with private_redis() as cache_redis:
        result = subprocess.run(
            [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
            cwd=BASE_DIR,
            env=_production_env(DEBUG="0", HTTPS="1", REDIS_URL=cache_redis.url()),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    # Silenced: the client API's password grant and optional PKCE (settings, the reason).
    assert "System check identified no issues (2 silenced)." in result.stdout


def _settings_in(env: dict[str, str], *names: str) -> list[str]:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        f"print([getattr(settings, n) for n in {names!r}])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_debug_is_off_unless_asked_for():
    assert _settings_in(_production_env(), "DEBUG") == "[False]"
    assert _settings_in(_production_env(DEBUG="1"), "DEBUG") == "[True]"


def test_https_turns_on_secure_cookies_hsts_and_the_ssl_redirect():
    names = (
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SESSION_COOKIE_HTTPONLY",
    )
    assert _settings_in(_production_env(HTTPS="1"), *names) == "[True, True, True, 31536000, True]"
    assert _settings_in(_production_env(HTTPS="0"), *names) == "[False, False, False, 0, True]"
