"""Follows, blocks, mutes and follow requests through the API: each does what the
profile's buttons do (``relations.services``) and answers Mastodon's Relationship."""

import pytest

from accounts.services import update_profile
from relations.models import Followee
from relations.services import block, follow, mute
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RELATIONSHIP_KEYS = {
    "id",
    "following",
    "showing_reblogs",
    "notifying",
    "languages",
    "followed_by",
    "blocking",
    "blocked_by",
    "muting",
    "muting_notifications",
    "requested",
    "requested_by",
    "domain_blocking",
    "endorsed",
    "note",
}


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


def test_follow_and_unfollow_answer_the_relationship(api, alice, bob, token):
    followed = api.post(f"/api/v1/accounts/{bob.pk}/follow", token=token)
    assert followed.status_code == 200, followed.content
    shown = followed.json()
    assert set(shown) == RELATIONSHIP_KEYS
    assert shown["id"] == str(bob.pk)
    assert shown["following"] and shown["showing_reblogs"] and not shown["requested"]
    assert Followee.objects.filter(user_id=alice.pk, followee_id=bob.pk).exists()
    again = api.post(f"/api/v1/accounts/{bob.pk}/follow/", token=token)  # trailing slash too
    assert again.json()["following"]
    gone = api.post(f"/api/v1/accounts/{bob.pk}/unfollow", token=token).json()
    assert not gone["following"]
    assert not Followee.objects.filter(user_id=alice.pk, followee_id=bob.pk).exists()


def test_follow_options_are_the_sites_hide_reposts_and_notify(api, alice, bob, token):
    shown = api.post(
        f"/api/v1/accounts/{bob.pk}/follow", {"reblogs": False, "notify": True}, token=token
    ).json()
    assert shown["following"] and not shown["showing_reblogs"] and shown["notifying"]
    row = Followee.objects.get(user_id=alice.pk, followee_id=bob.pk)
    assert row.hide_reposts and row.notify_posts
    # A form, as Mastodon.py sends; an option left out stays as it was.
    shown = api.post(
        f"/api/v1/accounts/{bob.pk}/follow", {"reblogs": "1"}, token=token, json=False
    ).json()
    assert shown["showing_reblogs"] and shown["notifying"]


def test_following_a_locked_account_asks_and_the_owner_authorizes(
    api, alice, bob, token, make_token
):
    update_profile(user=bob, display_name="Bob", bio="", locked=True)
    asked = api.post(f"/api/v1/accounts/{bob.pk}/follow", token=token).json()
    assert asked["requested"] and not asked["following"]
    bobs = make_token(bob)
    waiting = api.get("/api/v1/follow_requests", token=bobs)
    assert [account["id"] for account in waiting.json()] == [str(alice.pk)]
    mine = api.get("/api/v1/accounts/verify_credentials", token=bobs).json()
    assert mine["locked"] and mine["source"]["follow_requests_count"] == 1
    seen = api.get("/api/v1/accounts/relationships", token=bobs, **{"id[]": [alice.pk]}).json()
    assert seen[0]["requested_by"]
    accepted = api.post(f"/api/v1/follow_requests/{alice.pk}/authorize", token=bobs).json()
    assert accepted["followed_by"] and not accepted["requested_by"]
    assert api.get(f"/api/v1/accounts/{bob.pk}/followers", token=token).json()[0]["id"] == str(
        alice.pk
    )
    # No request left: authorizing or rejecting it again is a 404.
    for action in ("authorize", "reject"):
        again = api.post(f"/api/v1/follow_requests/{alice.pk}/{action}", token=bobs)
        assert again.status_code == 404 and again.json()["error"]


def test_rejecting_a_request_drops_it(api, alice, carol, make_token):
    update_profile(user=alice, display_name="Alice", bio="", locked=True)
    follow(follower=carol, followee=alice)
    alices = make_token(alice)
    shown = api.post(f"/api/v1/follow_requests/{carol.pk}/reject", token=alices).json()
    assert not shown["requested_by"] and not shown["followed_by"]
    assert api.get("/api/v1/follow_requests", token=alices).json() == []


def test_block_ends_follows_both_ways_and_lists_the_blocked(api, alice, bob, carol, token):
    follow(follower=alice, followee=bob)
    follow(follower=bob, followee=alice)
    shown = api.post(f"/api/v1/accounts/{bob.pk}/block", token=token).json()
    assert shown["blocking"] and not shown["following"] and not shown["followed_by"]
    api.post(f"/api/v1/accounts/{carol.pk}/block", token=token)
    listed = api.get("/api/v1/blocks", token=token)
    assert [account["id"] for account in listed.json()] == [str(carol.pk), str(bob.pk)]
    refused = api.post(f"/api/v1/accounts/{bob.pk}/follow", token=token)
    assert refused.status_code == 403 and refused.json()["error"]
    assert not api.post(f"/api/v1/accounts/{bob.pk}/unblock", token=token).json()["blocking"]


def test_who_is_blocked_sees_blocked_by_and_cannot_follow(api, alice, bob, make_token):
    block(user=alice, target=bob)
    bobs = make_token(bob)
    seen = api.get("/api/v1/accounts/relationships", token=bobs, id=alice.pk).json()
    assert seen[0]["blocked_by"] and not seen[0]["blocking"]
    assert api.post(f"/api/v1/accounts/{alice.pk}/follow", token=bobs).status_code == 403


def test_mute_and_unmute_and_the_list_of_mutes(api, alice, bob, carol, token):
    shown = api.post(
        f"/api/v1/accounts/{bob.pk}/mute", {"notifications": False, "duration": 60}, token=token
    ).json()
    assert shown["muting"] and not shown["muting_notifications"]
    mute(user=alice, target=carol)
    first = api.get("/api/v1/mutes", token=token, limit=1)
    assert [a["id"] for a in first.json()] == [str(carol.pk)]
    next_url = first["Link"].split(";")[0].strip("<>")
    assert 'rel="next"' in first["Link"]
    second = api.get(next_url.split("testserver")[-1], token=token)
    assert [a["id"] for a in second.json()] == [str(bob.pk)]
    assert not api.post(f"/api/v1/accounts/{bob.pk}/unmute", token=token).json()["muting"]


def test_relationships_of_many_cost_the_same_queries(
    api, alice, token, django_assert_max_num_queries
):
    people = [UserFactory() for _ in range(12)]
    for person in people[:4]:
        follow(follower=alice, followee=person)
    block(user=people[5], target=alice)
    mute(user=alice, target=people[6])
    ids = [str(person.pk) for person in people]
    api.get("/api/v1/accounts/relationships", token=token, **{"id[]": ids[:1]})  # warm
    # The token, the last-active check, the known people, their relationships.
    with django_assert_max_num_queries(4):
        shown = api.get(
            "/api/v1/accounts/relationships",
            token=token,
            **{"id[]": [*ids, "999999999", "nope", ids[0]]},
        ).json()
    assert [r["id"] for r in shown] == ids  # unknown ids left out, repeats once
    assert [r["following"] for r in shown] == [True] * 4 + [False] * 8
    assert shown[5]["blocked_by"] and shown[6]["muting"]


def test_bad_input_is_a_json_error(api, alice, bob, token, make_token):
    assert api.post("/api/v1/accounts/999999999/follow", token=token).status_code == 404
    assert api.post("/api/v1/accounts/abc/follow", token=token).status_code == 404
    selfish = api.post(f"/api/v1/accounts/{alice.pk}/follow", token=token)
    assert selfish.status_code == 422 and selfish.json()["error"]
    assert api.post(f"/api/v1/accounts/{bob.pk}/follow").status_code == 401
    reader = make_token(alice, "read")
    refused = api.post(f"/api/v1/accounts/{bob.pk}/block", token=reader)
    assert refused.status_code == 403
    bad_cursor = api.get("/api/v1/blocks", token=token, max_id="12")
    assert bad_cursor.status_code == 422 and bad_cursor.json()["error"]
    wrong_type = api.post(f"/api/v1/accounts/{bob.pk}/follow", {"reblogs": "maybe"}, token=token)
    assert wrong_type.status_code == 422 and "details" in wrong_type.json()
    assert api.get("/api/v1/accounts/relationships", token=token).json() == []
    assert api.get("/api/v1/follow_requests").status_code == 401


def test_the_follow_scope_grants_the_relationship_endpoints(api, alice, bob, make_token):
    follower = make_token(alice, "follow")
    assert api.post(f"/api/v1/accounts/{bob.pk}/follow", token=follower).status_code == 200
    assert api.get("/api/v1/blocks", token=follower).status_code == 200
    assert api.post(f"/api/v1/accounts/{bob.pk}/mute", token=follower).status_code == 200
