"""Usernames and e-mail addresses are claimed in tables of their own (accounts.unique_names).

On Citus ``accounts_user`` is distributed by id and cannot hold case-insensitive
uniqueness; the claims, distributed by name and address, hold it on every
database and route the look-ups of a person by name or address to one shard.
"""

from importlib import import_module

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.test import Client

from accounts import addresses, deletion, unique_names
from accounts.models import EmailClaim, User, UsernameClaim
from tests.conftest import PASSWORD
from tests.factories import UserFactory, set_email

pytestmark = pytest.mark.django_db


def signup(client: Client, **fields: str):
    data = {"display_name": "", "password1": PASSWORD, "password2": PASSWORD, **fields}
    return client.post("/accounts/signup/", data)


@pytest.mark.embedded
def test_sign_up_claims_the_username_and_the_address_lower_cased(client):
    assert signup(client, username="Dora_B", email="Dora@Example.com").status_code == 302

    dora = User.objects.get(username="Dora_B")
    assert UsernameClaim.objects.get(name="dora_b").user_id == dora.pk
    assert EmailClaim.objects.get(address="dora@example.com").user_id == dora.pk


def test_an_address_that_lower_casing_lengthens_is_claimed(client):
    """Django takes "İ" in an address; lower-cased it is two code points."""
    address = "İ" * 200 + "@example.com"  # 212 characters, 412 lower-cased
    assert signup(client, username="dora", email=address).status_code == 302
    assert unique_names.users_with_email(address.upper()).get().username == "dora"


def test_an_address_too_long_once_its_domain_is_lower_cased_is_refused(client):
    address = "d@" + ".".join(["İ" * 60] * 4) + ".com"  # 249 characters, 489 stored
    response = signup(client, username="dora", email=address)
    assert response.status_code == 400
    assert "That address is too long." in response.context["form"].errors["email"]


@pytest.mark.embedded
def test_a_claimed_name_is_taken_in_every_case_on_the_sign_up_form(client, alice):
    response = signup(client, username="ALICE", email="other@example.com")

    assert response.status_code == 400
    assert "That username is taken." in response.context["form"].errors["username"]


def test_the_claim_alone_keeps_a_name_unique_as_on_citus(alice):
    """Without accounts_user's own unique constraints (Citus drops them), the claim refuses."""
    with connection.cursor() as db:
        # IF EXISTS: on Citus the migrations have dropped them already.
        db.execute(
            "DROP INDEX IF EXISTS accounts_user_username_ci_unique, accounts_user_email_ci_unique"
        )
        db.execute("ALTER TABLE accounts_user DROP CONSTRAINT IF EXISTS accounts_user_username_key")
    with pytest.raises(IntegrityError), transaction.atomic():
        UserFactory(username="Alice")
    set_email(alice, "alice@example.com")
    with pytest.raises(IntegrityError), transaction.atomic():
        UserFactory(username="other", email="ALICE@example.com")
    assert User.objects.filter(username__iexact="alice").count() == 1
    assert not User.objects.filter(username="other").exists()  # the row went with its claim


def test_log_in_profile_and_follow_find_the_person_through_the_claim(client, alice, carol):
    # A new claim, not an update of the key (its distribution column on Citus).
    UsernameClaim.objects.filter(user_id=alice.pk).delete()
    UsernameClaim.objects.create(name="someone_else", user_id=alice.pk)

    client.force_login(carol)
    assert client.get("/@alice/").status_code == 404  # no claim, no person
    assert client.post("/@alice/follow/").status_code == 404
    assert client.get("/@someone_else/").status_code == 200  # the claim names alice
    assert (
        Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD}).status_code
        == 200
    )  # refused: the form again
    signed_in = Client().post(
        "/accounts/login/", {"username": "SOMEONE_ELSE", "password": PASSWORD}
    )
    assert signed_in.status_code == 302


def test_a_renamed_account_moves_its_claim(alice):
    alice.username = "alicia"
    alice.save()

    assert set(UsernameClaim.objects.filter(user_id=alice.pk).values_list("name", flat=True)) == {
        "alicia"
    }
    assert not unique_names.username_taken("alice")
    assert unique_names.users_named("ALICIA").get() == alice


def test_a_confirmed_change_of_address_moves_the_claim_and_frees_the_old_one(alice, carol):
    set_email(alice, "old@example.com")
    addresses.request_change(user=alice, address="New@Example.com", base_url="http://testserver")
    outcome = addresses.confirm(user_id=alice.pk, address="new@example.com")

    assert outcome == addresses.Outcome.VERIFIED
    assert EmailClaim.objects.get(address="new@example.com").user_id == alice.pk
    assert not EmailClaim.objects.filter(address="old@example.com").exists()
    set_email(carol, "OLD@example.com")  # free for anyone now
    assert unique_names.users_with_email("old@example.com").get() == carol


def test_erasure_keeps_the_username_taken_and_frees_the_address(client, alice):
    set_email(alice, "alice@example.com")
    deletion.request_deletion(user=alice)
    assert deletion.erase(user_id=alice.pk, now=alice.deletion_due_at)

    assert unique_names.users_named("alice").get().erased_at is not None
    assert not EmailClaim.objects.filter(user_id=alice.pk).exists()
    response = signup(client, username="Alice", email="alice@example.com")
    assert "That username is taken." in response.context["form"].errors["username"]
    assert signup(client, username="alice2", email="alice@example.com").status_code == 302
    assert unique_names.users_with_email("ALICE@example.com").get().username == "alice2"


def test_mentions_notify_the_people_named_in_any_case(
    alice, bob, carol, django_capture_on_commit_callbacks
):
    from posts.services import create_post
    from timelines.notifications.models import Notification

    with django_capture_on_commit_callbacks(execute=True):
        create_post(author=carol, text="hi @ALICE and @Bob and @nobody")

    mentioned = Notification.objects.filter(actor_id=carol.pk, kind="mention")
    assert set(mentioned.values_list("recipient_id", flat=True)) == {alice.pk, bob.pk}


def test_the_migration_fills_the_claims_of_the_users_there_are(alice, bob):
    set_email(alice, "Alice@Example.com")
    UsernameClaim.objects.all().delete()
    EmailClaim.objects.all().delete()
    migration = import_module("accounts.migrations.0006_username_email_claims")

    migration.fill_claims(apps, None)

    assert dict(UsernameClaim.objects.values_list("name", "user_id")) == {
        "alice": alice.pk,
        "bob": bob.pk,
    }
    assert dict(EmailClaim.objects.values_list("address", "user_id")) == {
        "alice@example.com": alice.pk
    }
