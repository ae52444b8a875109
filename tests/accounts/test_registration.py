"""Registration modes: open, approval (a moderator decides), invite, closed."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from accounts import registration
from accounts.models import Invite, RegistrationSetting, SignupApplication, User
from feed_project.refusals import Forbidden
from tests.conftest import PASSWORD

SIGNUP = "/accounts/signup/"


def _data(**extra: str) -> dict[str, str]:
    return {
        "username": "dora",
        "email": "dora@example.com",
        "password1": PASSWORD,
        "password2": PASSWORD,
        **extra,
    }


def test_closed_refuses_sign_up_with_a_clear_page(db, settings):
    settings.REGISTRATION_MODE = "closed"
    for response in (Client().get(SIGNUP), Client().post(SIGNUP, _data())):
        assert response.status_code == 403
        assert b"Sign-up is closed" in response.content
    assert not User.objects.exists()


def test_approval_keeps_the_account_inactive_until_a_moderator_approves(
    db, settings, mailbox, django_capture_on_commit_callbacks
):
    settings.REGISTRATION_MODE = "approval"
    client = Client()
    assert b'name="reason"' in client.get(SIGNUP).content
    assert client.post(SIGNUP, _data()).status_code == 400  # the reason is required
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(SIGNUP, _data(reason="I write about birds."))
    assert response.status_code == 302
    assert response["Location"] == "/accounts/signup/pending/"
    dora = User.objects.get(username="dora")
    assert not dora.is_active
    assert SignupApplication.objects.get(user_id=dora.pk).reason == "I write about birds."
    login = Client().post("/accounts/login/", {"username": "dora", "password": PASSWORD})
    assert login.status_code == 200  # refused

    moderator = User.objects.create_superuser("mod", "mod@example.com", PASSWORD)
    admin = Client()
    admin.force_login(moderator)
    with django_capture_on_commit_callbacks(execute=True):
        done = admin.post(
            "/admin/accounts/signupapplication/",
            {"action": "approve", "_selected_action": [str(dora.pk)]},
        )
    assert done.status_code == 302
    dora.refresh_from_db()
    assert dora.is_active
    assert mailbox.wait_for("dora@example.com", count=2)["Subject"] == "Your account is approved"
    login = Client().post("/accounts/login/", {"username": "dora", "password": PASSWORD})
    assert login.status_code == 302


def test_an_application_is_decided_once(db, settings):
    settings.REGISTRATION_MODE = "approval"
    Client().post(SIGNUP, _data(reason="hello"))
    application = SignupApplication.objects.get()
    moderator = User.objects.create_superuser("mod", "mod@example.com", PASSWORD)
    kwargs = {"application": application, "moderator": moderator, "base_url": "http://x"}
    assert registration.decide(**kwargs, approve=False)
    assert not registration.decide(**kwargs, approve=True)
    assert not User.objects.get(username="dora").is_active


@pytest.fixture
def inviter(alice):
    alice.user_permissions.add(Permission.objects.get(codename="add_invite"))
    return User.objects.get(pk=alice.pk)  # a fresh object: permissions are cached


def test_only_those_given_the_permission_may_make_invite_links(inviter, carol):
    registration.check_may_invite(user=inviter)
    with pytest.raises(Forbidden) as caught:
        registration.check_may_invite(user=carol)
    assert caught.value.message == "You may not make invite links."
    assert (registration.may_invite(inviter), registration.may_invite(carol)) == (True, False)


def test_sign_up_is_refused_when_closed_or_by_invitation_without_a_good_link(inviter):
    registration.check_signup_open(mode="open", invite_token="")
    with pytest.raises(Forbidden) as caught:
        registration.check_signup_open(mode="closed")
    assert (caught.value.mode, caught.value.message) == ("closed", "Sign-up is closed.")
    with pytest.raises(registration.SignupClosed) as caught:
        registration.check_signup_open(mode="invite", invite_token="nonsense")
    assert caught.value.message.startswith("Sign-up is by invitation")
    registration.check_signup_open(mode="invite")  # a form that checks its own invite
    invite = registration.create_invite(user=inviter, days=1, max_uses=1)
    registration.check_signup_open(mode="invite", invite_token=invite.token)


def test_invite_mode_needs_a_valid_invite(inviter, settings):
    settings.REGISTRATION_MODE = "invite"
    assert Client().get(SIGNUP).status_code == 403
    assert b"by invitation" in Client().get(SIGNUP).content

    client = Client()
    client.force_login(inviter)
    page = client.post("/settings/invites/", {"days": "7", "max_uses": "1"})
    assert page.status_code == 302
    invite = Invite.objects.get(user_id=inviter.pk)

    signup_page = Client().get(f"{SIGNUP}?invite={invite.token}")
    assert signup_page.status_code == 200
    assert invite.token in signup_page.content.decode()
    response = Client().post(SIGNUP, _data(invite=invite.token))
    assert response.status_code == 302
    invite.refresh_from_db()
    assert invite.uses == 1

    used_up = Client().post(SIGNUP, _data(username="eve", email="e@x.org", invite=invite.token))
    assert used_up.status_code == 400
    assert b"invite link has expired, been used up" in used_up.content
    assert not User.objects.filter(username="eve").exists()


def test_an_expired_or_forged_invite_is_refused(inviter, settings):
    settings.REGISTRATION_MODE = "invite"
    invite = registration.create_invite(user=inviter, days=1, max_uses=5)
    Invite.objects.filter(pk=invite.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    for token in (invite.token, f"{inviter.pk}.forgedcode123", "x.y", "", "9" * 40 + ".abcdefgh"):
        response = Client().post(SIGNUP, _data(invite=token))
        assert response.status_code == 400, token
    assert not User.objects.filter(username="dora").exists()


def test_only_users_with_the_permission_make_invites(alice_client):
    assert alice_client.get("/settings/invites/").status_code == 403
    response = alice_client.post("/settings/invites/", {"days": "7", "max_uses": "1"})
    assert response.status_code == 403
    assert not Invite.objects.exists()


def test_invite_form_errors_are_shown(inviter):
    client = Client()
    client.force_login(inviter)
    response = client.post("/settings/invites/", {"days": "0", "max_uses": "100000"})
    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"days", "max_uses"}


# --- the admin switch ------------------------------------------------------------------


def test_an_operator_switches_the_mode_in_the_admin_over_the_setting(db, settings):
    settings.REGISTRATION_MODE = "open"
    operator = User.objects.create_superuser("operator", "op@example.com", PASSWORD)
    admin = Client()
    admin.force_login(operator)
    assert Client().get(SIGNUP).status_code == 200  # the setting: open

    # The list goes to the form that makes the one row, which names the setting's default.
    listing = admin.get("/admin/accounts/registrationsetting/")
    assert listing.status_code == 302 and listing["Location"].endswith("/add/")
    form = admin.get(listing["Location"])
    assert "REGISTRATION_MODE setting (open)" in form.content.decode()
    done = admin.post("/admin/accounts/registrationsetting/add/", {"mode": "closed"})
    assert done.status_code == 302
    saved = RegistrationSetting.objects.get()
    assert (saved.pk, saved.mode, saved.changed_by) == (1, "closed", "operator")
    assert registration.mode() == "closed"
    refused = Client().post(SIGNUP, _data())
    assert refused.status_code == 403 and b"Sign-up is closed" in refused.content
    assert not User.objects.filter(username="dora").exists()

    # One row only: the list goes to it, adding another is refused.
    listing = admin.get("/admin/accounts/registrationsetting/")
    assert listing["Location"].endswith("/accounts/registrationsetting/1/change/")
    assert admin.get("/admin/accounts/registrationsetting/add/").status_code == 403
    admin.post("/admin/accounts/registrationsetting/1/change/", {"mode": "approval"})
    assert registration.mode() == "approval"
    assert b'name="reason"' in Client().get(SIGNUP).content

    # Deleting the choice returns to the setting.
    admin.post("/admin/accounts/registrationsetting/1/delete/", {"post": "yes"})
    assert not RegistrationSetting.objects.exists()
    assert registration.mode() == "open"
    assert Client().post(SIGNUP, _data()).status_code == 302


def test_a_moderator_without_the_permission_cannot_switch_the_mode(db, settings):
    settings.REGISTRATION_MODE = "invite"
    moderator = User.objects.create_user("mod", "mod@example.com", PASSWORD, is_staff=True)
    client = Client()
    client.force_login(moderator)
    assert (
        client.post("/admin/accounts/registrationsetting/add/", {"mode": "open"}).status_code == 403
    )
    assert not RegistrationSetting.objects.exists()
    assert registration.mode() == "invite"
    moderator.user_permissions.add(Permission.objects.get(codename="add_registrationsetting"))
    assert (
        client.post("/admin/accounts/registrationsetting/add/", {"mode": "open"}).status_code == 302
    )
    assert registration.mode() == "open"
