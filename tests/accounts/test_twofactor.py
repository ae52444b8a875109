"""Two-factor: set up by a code from the secret, log in with TOTP or a recovery code, once each."""

import re
from datetime import timedelta

import pyotp
import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.utils import timezone

from accounts import twofactor
from accounts.models import RecoveryCode, TwoFactor, User
from tests.conftest import PASSWORD

LOGIN = "/accounts/login/"
CODE = "/accounts/login/code/"


def _code(secret: str, *, at=None) -> str:
    return pyotp.TOTP(secret).at(at or timezone.now())


def _set_up(client: Client, user: User) -> tuple[str, list[str]]:
    """Through the pages: start, read the secret off the page, confirm; the recovery codes."""
    assert client.post("/settings/security/2fa/setup/").status_code == 302
    page = client.get("/settings/security/").content.decode()
    secret = re.search(r"Key: <code>([A-Z2-7]+)</code>", page).group(1)
    assert 'src="data:image/svg+xml' in page  # the QR code, drawn here
    assert TwoFactor.objects.get(user_id=user.pk).confirmed_at is None
    response = client.post("/settings/security/2fa/confirm/", {"code": _code(secret)})
    assert response.status_code == 302
    page = client.get("/settings/security/").content.decode()
    codes = re.findall(r"<code>([a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4})</code>", page)
    assert len(codes) == 10
    assert "this page shows them only now" not in client.get("/settings/security/").content.decode()
    return secret, codes


def _password_step(client: Client, username: str = "alice"):
    return client.post(LOGIN, {"username": username, "password": PASSWORD})


def _signed_in(client: Client) -> bool:
    return client.get("/").context["user"].is_authenticated


def test_set_up_then_log_in_with_a_totp_code(alice_client, alice):
    secret, codes = _set_up(alice_client, alice)
    assert RecoveryCode.objects.filter(user_id=alice.pk).count() == 10
    assert not RecoveryCode.objects.filter(digest__in=[c.replace("-", "") for c in codes]).exists()

    client = Client()
    step = _password_step(client)
    assert step.status_code == 302 and step["Location"] == CODE
    assert not _signed_in(client)  # the password alone signs nobody in

    later = timezone.now() + timedelta(seconds=30)
    assert client.post(CODE, {"code": _code(secret, at=later)}).status_code == 302
    assert _signed_in(client)


def test_a_wrong_code_is_refused(alice_client, alice):
    secret, _ = _set_up(alice_client, alice)
    client = Client()
    _password_step(client)
    wrong = "000000" if _code(secret) != "000000" else "111111"
    response = client.post(CODE, {"code": wrong})
    assert response.status_code == 400
    assert "That code is not right" in response.content.decode()
    assert not _signed_in(client)


def test_a_code_works_once(alice_client, alice):
    secret, _ = _set_up(alice_client, alice)
    code = _code(secret, at=timezone.now() + timedelta(seconds=30))
    first = Client()
    _password_step(first)
    assert first.post(CODE, {"code": code}).status_code == 302

    second = Client()
    _password_step(second)
    assert second.post(CODE, {"code": code}).status_code == 400
    assert not _signed_in(second)


def test_a_recovery_code_logs_in_once(alice_client, alice):
    _, codes = _set_up(alice_client, alice)
    client = Client()
    _password_step(client)
    assert client.post(CODE, {"code": codes[3].upper()}).status_code == 302
    assert _signed_in(client)

    again = Client()
    _password_step(again)
    assert again.post(CODE, {"code": codes[3]}).status_code == 400
    assert not _signed_in(again)
    assert twofactor.recovery_codes_left(alice) == 9


def test_the_code_step_without_a_password_step_goes_back_to_log_in(db):
    response = Client().post(CODE, {"code": "123456"})
    assert response.status_code == 302
    assert response["Location"] == LOGIN


def test_a_code_too_late_needs_the_password_again(alice_client, alice):
    secret, _ = _set_up(alice_client, alice)
    client = Client()
    _password_step(client)
    session = client.session
    session["accounts_2fa_pending"]["since"] -= 3600
    session.save()
    response = client.post(CODE, {"code": _code(secret)})
    assert response["Location"] == LOGIN
    assert not _signed_in(client)


def test_the_next_page_survives_the_second_step(alice_client, alice):
    secret, _ = _set_up(alice_client, alice)
    client = Client()
    client.post(LOGIN, {"username": "alice", "password": PASSWORD, "next": "/@alice/"})
    response = client.post(CODE, {"code": _code(secret, at=timezone.now() + timedelta(seconds=30))})
    assert response["Location"] == "/@alice/"


def test_setup_with_a_wrong_code_stays_off(alice_client, alice):
    alice_client.post("/settings/security/2fa/setup/")
    response = alice_client.post("/settings/security/2fa/confirm/", {"code": "12345x"})
    assert response.status_code == 400
    assert not twofactor.is_enabled(alice)


def test_turning_it_off_needs_the_password(alice_client, alice):
    _set_up(alice_client, alice)
    refused = alice_client.post("/settings/security/2fa/disable/", {"password": "wrong"})
    assert refused.status_code == 400
    assert twofactor.is_enabled(alice)
    done = alice_client.post("/settings/security/2fa/disable/", {"password": PASSWORD})
    assert done.status_code == 302
    assert not twofactor.is_enabled(alice)
    assert not RecoveryCode.objects.filter(user_id=alice.pk).exists()
    assert _password_step(Client())["Location"] == "/"


def test_new_recovery_codes_replace_the_old(alice_client, alice):
    _, old = _set_up(alice_client, alice)
    assert (
        alice_client.post(
            "/settings/security/2fa/recovery-codes/", {"password": PASSWORD}
        ).status_code
        == 302
    )
    assert not twofactor.use_recovery_code(user=alice, code=old[0])
    assert twofactor.recovery_codes_left(alice) == 10


@override_settings(
    RATELIMIT_ENABLED=True, RATELIMIT_RATES={"login": ("", ""), "twofactor": ("3/d", "")}
)
def test_guessing_codes_is_rate_limited_per_account(alice_client, alice):
    _set_up(alice_client, alice)
    cache.clear()
    statuses = []
    for _ in range(4):
        client = Client()
        _password_step(client)
        statuses.append(client.post(CODE, {"code": "000001"}).status_code)
    assert statuses == [400, 400, 400, 429]


def test_moderators_need_two_factor_for_the_admin_when_required(alice, settings):
    settings.REQUIRE_2FA_FOR_MODERATORS = True
    User.objects.filter(pk=alice.pk).update(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(alice)
    response = client.get("/admin/")
    assert response.status_code == 302
    assert response["Location"] == "/settings/security/"

    secret, _ = _set_up(client, alice)  # confirming in this session counts
    assert client.get("/admin/").status_code == 200

    fresh = Client()
    _password_step(fresh)
    fresh.post(CODE, {"code": _code(secret, at=timezone.now() + timedelta(seconds=30))})
    assert fresh.get("/admin/").status_code == 200


def test_the_admin_log_in_form_is_the_sites(db):
    response = Client().get("/admin/login/?next=/admin/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/admin/"


@pytest.mark.embedded
def test_the_qr_code_is_an_svg_data_uri(db):
    uri = twofactor.provisioning_uri(user=User(username="alice"), secret=pyotp.random_base32())
    assert uri.startswith("otpauth://totp/Feed:alice?")
    assert twofactor.qr_code_data_uri(uri).startswith("data:image/svg+xml")
