"""Hostile input at the accounts and relationship endpoints: whatever a client sends,
the answer is JSON and never a 5xx; and bodies clients really send (none at all, an
empty JSON one) are taken."""

from urllib.parse import quote

import pytest
from hypothesis import given

from tests.api.hostile import FUZZ, json_and_not_5xx, nasty
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NASTY = nasty("a@b@c", "1_1")


@pytest.fixture
def token(make_token):
    return make_token(UserFactory(username="fuzzer"))


@FUZZ
@given(value=NASTY, limit=NASTY)
def test_people_lists_and_lookups_of_anything(api, token, value, limit):
    quoted = quote(value, safe="")
    for action in ("follow", "unfollow", "block", "unblock", "mute", "unmute"):
        json_and_not_5xx(api.post(f"/api/v1/accounts/{quoted}/{action}", token=token))
    for action in ("authorize", "reject"):
        json_and_not_5xx(api.post(f"/api/v1/follow_requests/{quoted}/{action}", token=token))
    json_and_not_5xx(api.delete(f"/api/v1/suggestions/{quoted}", token=token))
    for name in ("max_id", "since_id", "min_id"):
        for path in ("/api/v1/blocks", "/api/v1/mutes", "/api/v1/follow_requests"):
            json_and_not_5xx(api.get(path, token=token, limit=limit, **{name: value}))
    json_and_not_5xx(api.get("/api/v1/accounts/relationships", token=token, **{"id[]": [value]}))
    json_and_not_5xx(api.get("/api/v1/accounts/lookup", acct=value))
    json_and_not_5xx(api.get("/api/v1/accounts/search", token=token, q=value, limit=limit))
    json_and_not_5xx(api.get("/api/v2/suggestions", token=token, limit=limit))


@FUZZ
@given(reblogs=NASTY, notify=NASTY, name=NASTY, note=NASTY, locked=NASTY)
def test_bodies_of_anything(api, client, token, reblogs, notify, name, note, locked):
    target = UserFactory()
    body = {"reblogs": reblogs, "notify": notify}
    json_and_not_5xx(api.post(f"/api/v1/accounts/{target.pk}/follow", body, token=token))
    json_and_not_5xx(api.post(f"/api/v1/accounts/{target.pk}/mute", body, token=token, json=False))
    sent = {"display_name": name, "note": note, "locked": locked}
    json_and_not_5xx(
        client.patch(
            "/api/v1/accounts/update_credentials",
            sent,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
    )


def test_a_follow_with_no_body_or_an_empty_one_is_a_follow(client, token):
    headers = {"Authorization": f"Bearer {token}"}
    for content_type in ("application/json", "application/x-www-form-urlencoded"):
        target = UserFactory()
        response = client.post(
            f"/api/v1/accounts/{target.pk}/follow", "", content_type=content_type, headers=headers
        )
        assert response.status_code == 200, (content_type, response.content)
        assert response.json()["following"]
