"""E-mail: sign-up asks for one, a link proves it, a change re-proves it; real SMTP."""

from contextlib import nullcontext

import pytest
from django.core import signing
from django.test import Client

from accounts import addresses
from accounts.models import User
from accounts.tokens import SALT, read_verification_token, verification_token
from posts.models import Post
from tests.conftest import PASSWORD
from tests.factories import UserFactory, set_email

SIGNUP = "/accounts/signup/"


def signup(client: Client, commit, **overrides: str):
    data = {
        "username": "dora",
        "display_name": "Dora",
        "email": "Dora@Example.COM",
        "password1": PASSWORD,
        "password2": PASSWORD,
        **overrides,
    }
    with commit(execute=True):
        return client.post(SIGNUP, data)


def follow_link(client: Client, path: str, commit):
    page = client.get(path)
    assert page.status_code == 200
    assert b'type="submit"' in page.content
    with commit(execute=True):
        return client.post(path)


def test_sign_up_mail_link_verified_end_to_end(
    db, client, mailbox, django_capture_on_commit_callbacks
):
    response = signup(client, django_capture_on_commit_callbacks)

    assert response.status_code == 302
    user = User.objects.get(username="dora")
    assert user.email == "Dora@example.com"  # the domain is lower-cased, the name kept
    assert not user.email_verified
    mail = mailbox.wait_for("Dora@example.com")
    assert mail["Subject"] == "Confirm your e-mail address"
    path = mailbox.link(mail)
    assert path.startswith("/accounts/verify/")

    assert follow_link(client, path, django_capture_on_commit_callbacks).status_code == 302
    user.refresh_from_db()
    assert user.email_verified
    again = client.post(path)
    assert again.status_code == 302  # already verified: said so, nothing changes


def test_the_signup_form_requires_an_email(client, db):
    response = signup(client, lambda **_: nullcontext(), email="")
    assert response.status_code == 400
    assert "email" in response.context["form"].errors
    assert not User.objects.exists()


@pytest.mark.parametrize("email", ["not-an-address", "a@b@c", "x" * 250 + "@example.com"])
def test_a_malformed_email_is_refused_with_the_field_marked(client, db, email):
    response = signup(client, lambda **_: nullcontext(), email=email)
    assert response.status_code == 400
    assert "email" in response.context["form"].errors


def test_sign_up_with_a_taken_address_answers_the_same_and_mails_its_owner(
    client, mailbox, alice, django_capture_on_commit_callbacks
):
    set_email(alice, "alice@example.com")
    fresh = signup(Client(), django_capture_on_commit_callbacks, username="fresh", email="f@x.org")
    taken = signup(client, django_capture_on_commit_callbacks, email="ALICE@example.com")

    assert (taken.status_code, taken["Location"]) == (fresh.status_code, fresh["Location"])
    home = client.get("/")
    assert "We sent a mail to ALICE@example.com" in home.content.decode()
    dora = User.objects.get(username="dora")
    assert (dora.email, dora.unconfirmed_email) == ("", "ALICE@example.com")
    notice = mailbox.wait_for("alice@example.com")
    assert notice["Subject"] == "Someone tried to sign up with your e-mail address"
    assert "/accounts/verify/" not in mailbox.body(notice)
    assert User.objects.filter(email__iexact="alice@example.com").count() == 1


def test_changing_the_email_re_verifies_the_new_address(
    alice, mailbox, django_capture_on_commit_callbacks
):
    set_email(alice, "alice@example.com")
    addresses.confirm(user_id=alice.pk, address="alice@example.com")
    client = Client()
    client.force_login(alice)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/accounts/email/", {"email": "alice@new.example", "password": PASSWORD}
        )
    assert response.status_code == 302
    alice.refresh_from_db()
    # Until the new address is proven, mail still goes to the old one.
    assert (alice.email, alice.unconfirmed_email) == ("alice@example.com", "alice@new.example")

    path = mailbox.link(mailbox.wait_for("alice@new.example"))
    assert follow_link(client, path, django_capture_on_commit_callbacks).status_code == 302
    alice.refresh_from_db()
    assert (alice.email, alice.unconfirmed_email) == ("alice@new.example", "")
    assert alice.email_verified


def test_changing_the_email_needs_the_password(alice_client, alice):
    response = alice_client.post("/accounts/email/", {"email": "a@new.example", "password": "x"})
    assert response.status_code == 400
    assert "password" in response.context["form"].errors
    alice.refresh_from_db()
    assert alice.unconfirmed_email == ""


def test_a_link_to_an_address_no_longer_in_use_does_nothing(alice):
    set_email(alice, "new@example.com")
    old = verification_token(user_id=alice.pk, address="old@example.com")
    response = Client().post(f"/accounts/verify/{old}/")
    assert response.status_code == 400
    assert b"no longer uses" in response.content
    alice.refresh_from_db()
    assert not alice.email_verified


def test_confirming_an_address_another_account_took_meanwhile_says_so(alice, bob):
    User.objects.filter(pk=alice.pk).update(unconfirmed_email="shared@example.com")
    set_email(bob, "SHARED@example.com")
    token = verification_token(user_id=alice.pk, address="shared@example.com")
    response = Client().post(f"/accounts/verify/{token}/")
    assert response.status_code == 409
    alice.refresh_from_db()
    assert alice.email == ""


@pytest.mark.parametrize("token", ["nonsense", "a:b:c", "W1sxXQ:1u:bad"])
def test_a_forged_or_mangled_link_is_a_400(db, token):
    for method in ("get", "post"):
        response = getattr(Client(), method)(f"/accounts/verify/{token}/")
        assert response.status_code == 400
        assert b"not valid" in response.content


def test_an_expired_link_is_refused(alice, settings):
    settings.EMAIL_VERIFICATION_MAX_AGE_SECONDS = -1
    token = verification_token(user_id=alice.pk, address="alice@example.com")
    assert read_verification_token(token) is None


def test_a_token_with_the_wrong_shape_is_refused(db):
    assert read_verification_token(signing.dumps({"u": 1}, salt=SALT)) is None
    assert read_verification_token(signing.dumps([True, "a@b.c"], salt=SALT)) is None


@pytest.mark.embedded
def test_two_accounts_cannot_share_an_address_in_any_case(db):
    from django.db import IntegrityError, transaction

    UserFactory(username="one", email="same@example.com")
    with pytest.raises(IntegrityError), transaction.atomic():
        UserFactory(username="two", email="SAME@example.com")
    UserFactory(username="three", email="")
    UserFactory(username="four", email="")  # no address is not a shared address


def test_unverified_accounts_may_read_but_not_post_when_required(alice, settings):
    settings.REQUIRE_EMAIL_VERIFICATION = True
    client = Client()
    client.force_login(alice)
    assert client.get("/").status_code == 200
    response = client.post("/posts/new/", {"text": "hello"})
    assert response.status_code == 403
    assert b"Confirm your e-mail first" in response.content
    assert not Post.objects.exists()

    set_email(alice, "alice@example.com")
    addresses.confirm(user_id=alice.pk, address="alice@example.com")
    assert client.post("/posts/new/", {"text": "hello"}).status_code == 302
    assert Post.objects.filter(author=alice).count() == 1


def test_unverified_accounts_post_freely_when_not_required(alice_client, settings):
    settings.REQUIRE_EMAIL_VERIFICATION = False
    assert alice_client.post("/posts/new/", {"text": "hello"}).status_code == 302


def test_resending_the_link_mails_it_again(alice, mailbox, django_capture_on_commit_callbacks):
    set_email(alice, "alice@example.com")
    client = Client()
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/accounts/email/resend/").status_code == 302
    mailbox.wait_for("alice@example.com")
