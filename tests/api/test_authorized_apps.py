"""The settings page of the apps a person authorized: it lists them, and revoking
one ends its tokens (its next request is a 401); another person's app is a 404."""

import pytest
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAGE = "/settings/apps/"
ME = "/api/v1/accounts/verify_credentials"


def test_the_page_lists_the_apps_with_their_scopes(client, make_token, oauth_app):
    alice = UserFactory()
    make_token(alice, "read write")
    make_token(alice, "follow")
    make_token(UserFactory(), "push")  # someone else's token of the same app
    client.force_login(alice)
    page = client.get(PAGE)
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count(f'data-app-id="{oauth_app.pk}"') == 1
    assert "Test client" in text
    for scope in ("read", "write", "follow"):
        assert f"<code>{scope}</code>" in text
    assert "<code>push</code>" not in text
    assert f'action="{PAGE}{oauth_app.pk}/revoke/"' in text


def test_no_app_no_list(client):
    client.force_login(UserFactory())
    assert "No app has access" in client.get(PAGE).content.decode()


def test_the_security_page_links_to_it(client):
    client.force_login(UserFactory())
    assert f'href="{PAGE}"' in client.get("/settings/security/").content.decode()


def test_visitors_are_sent_to_log_in(client):
    answer = client.get(PAGE)
    assert answer.status_code == 302
    assert "/accounts/login/" in answer["Location"]


def test_revoking_ends_the_apps_tokens(client, api, make_token, oauth_app):
    alice, bob = UserFactory(), UserFactory()
    token = make_token(alice)
    bobs = make_token(bob)
    get_refresh_token_model().objects.create(
        user=alice,
        application=oauth_app,
        token="refresh-me",
        access_token=get_access_token_model().objects.get(user=alice),
    )
    assert api.get(ME, token=token).status_code == 200
    client.force_login(alice)
    answer = client.post(f"{PAGE}{oauth_app.pk}/revoke/")
    assert answer.status_code == 302
    assert answer["Location"] == PAGE
    assert api.get(ME, token=token).status_code == 401
    assert not get_refresh_token_model().objects.filter(user=alice).exists()
    assert "No app has access" in client.get(PAGE).content.decode()
    # Bob's sign-in to the same app is his own.
    assert api.get(ME, token=bobs).status_code == 200


def test_another_persons_app_cannot_be_revoked(client, api, make_token, oauth_app):
    bob = UserFactory()
    bobs = make_token(bob)
    client.force_login(UserFactory())
    assert client.post(f"{PAGE}{oauth_app.pk}/revoke/").status_code == 404
    assert client.post(f"{PAGE}999999/revoke/").status_code == 404
    assert api.get(ME, token=bobs).status_code == 200


def test_revoking_takes_a_post_with_its_csrf_token(make_token, oauth_app):
    from django.test import Client

    alice = UserFactory()
    make_token(alice)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.get(f"{PAGE}{oauth_app.pk}/revoke/").status_code == 405
    assert browser.post(f"{PAGE}{oauth_app.pk}/revoke/").status_code == 403
    assert get_access_token_model().objects.filter(user=alice).exists()


@pytest.mark.parametrize(
    ("website", "linked"),
    [("https://client.example/", True), ("javascript:alert(1)", False), ("elk://x", False)],
)
def test_only_a_web_address_is_linked(client, make_token, oauth_app, website, linked):
    oauth_app.website = website
    oauth_app.save()
    alice = UserFactory()
    make_token(alice)
    client.force_login(alice)
    text = client.get(PAGE).content.decode()
    assert (f'href="{website}"' in text) is linked
