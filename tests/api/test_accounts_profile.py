"""A person's follow lists, finding people (lookup, search), one's own profile
(update_credentials), an author's statuses filtered, static avatars and suggestions
through the API, as the profile, search and settings pages do them."""

import io

import pytest
from PIL import Image

from accounts.avatars import static_avatar_url
from accounts.models import User
from accounts.services import update_profile
from posts import ids
from posts.media import prepare
from posts.services import create_post, repost
from relations.models import Followee, FollowRequest
from relations.services import block, follow
from tests import images
from tests.factories import UserFactory
from timelines.suggestions.models import Suggestion
from timelines.suggestions.ranking import refresh

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


def path_of(link: str) -> str:
    return link.split("testserver", 1)[1]


def links(response) -> dict[str, str]:
    """rel -> path of a Link header."""
    found = {}
    for part in response.get("Link", "").split(", "):
        if part:
            url, rel = part.split("; ")
            found[rel.split('"')[1]] = path_of(url.strip("<>"))
    return found


def test_followers_and_following_page_by_the_lists_cursors(api, alice, token):
    fans = [UserFactory() for _ in range(5)]
    for fan in fans:
        follow(follower=fan, followee=alice)
    newest_first = [str(fan.pk) for fan in reversed(fans)]
    path = f"/api/v1/accounts/{alice.pk}/followers"
    pages, url = [], f"{path}?limit=2"
    while url:
        response = api.get(url, token=token)
        assert response.status_code == 200
        pages.append([account["id"] for account in response.json()])
        url = links(response).get("next")
    assert [i for page in pages for i in page] == newest_first
    first = api.get(path, limit=2)  # visitors see the lists, as on the site
    back = api.get(links(api.get(links(first)["next"]))["prev"])
    assert [a["id"] for a in back.json()] == newest_first[:2]
    following = api.get(f"/api/v1/accounts/{fans[0].pk}/following", token=token).json()
    assert [account["id"] for account in following] == [str(alice.pk)]


def test_people_blocked_either_way_are_left_out_of_the_lists(api, alice, bob, carol, make_token):
    follow(follower=carol, followee=alice)
    block(user=bob, target=carol)
    shown = api.get(f"/api/v1/accounts/{alice.pk}/followers", token=make_token(bob)).json()
    assert str(carol.pk) not in [account["id"] for account in shown]
    assert str(bob.pk) in [account["id"] for account in shown]


def test_list_paging_input_is_checked(api, alice):
    path = f"/api/v1/accounts/{alice.pk}/followers"
    assert api.get(path, max_id="not-a-cursor").status_code == 422
    assert api.get(path, since_id="1_1").status_code == 200
    assert api.get("/api/v1/accounts/99999999/followers").status_code == 404


def test_lookup_by_name_at_name_and_name_at_this_host(api, alice):
    for acct in ("alice", "@alice", "ALICE", "alice@testserver", "@alice@TestServer"):
        found = api.get("/api/v1/accounts/lookup", acct=acct)
        assert found.status_code == 200, acct
        assert found.json()["id"] == str(alice.pk)
    for acct in ("alice@elsewhere.example", "nobody", "", "@", "x" * 300):
        missing = api.get("/api/v1/accounts/lookup", acct=acct)
        assert missing.status_code == 404 and missing.json()["error"], acct
    assert api.get("/api/v1/accounts/lookup").status_code == 422


def test_search_is_the_sites_people_search(api, alice, bob, carol, token):
    UserFactory(username="bobby", display_name="Another Bob")
    found = api.get("/api/v1/accounts/search", token=token, q="bob").json()
    assert {account["username"] for account in found} == {"bob", "bobby"}
    assert len(api.get("/api/v1/accounts/search", token=token, q="bob", limit=1).json()) == 1
    follow(follower=alice, followee=bob)
    mine = api.get("/api/v1/accounts/search", token=token, q="bob", following="true").json()
    assert [account["username"] for account in mine] == ["bob"]
    assert api.get("/api/v1/accounts/search", token=token, q="bob", offset=40).json() == []
    assert api.get("/api/v1/accounts/search", token=token, q="  ").json() == []
    block(user=carol, target=alice)
    assert api.get("/api/v1/accounts/search", token=token, q="carol").json() == []
    assert api.get("/api/v1/accounts/search", token=token).status_code == 422
    assert api.get("/api/v1/accounts/search", q="bob").status_code == 401


def png(size=(40, 30)) -> bytes:
    return images.image_bytes("PNG", size)


def test_update_credentials_edits_the_profile_as_the_settings_form(
    client, alice, token, media_root
):
    headers = {"Authorization": f"Bearer {token}"}
    from django.test.client import encode_multipart

    body = encode_multipart(
        "BoUnDaRy",
        {
            "display_name": "Alice A.",
            "note": "Hello there",
            "locked": "1",
            "avatar": images.upload("me.png", png(), "image/png"),
        },
    )
    response = client.patch(
        "/api/v1/accounts/update_credentials",
        body,
        content_type="multipart/form-data; boundary=BoUnDaRy",
        headers=headers,
    )
    assert response.status_code == 200, response.content
    shown = response.json()
    assert shown["display_name"] == "Alice A." and shown["locked"]
    assert shown["source"]["note"] == "Hello there" and "Hello there" in shown["note"]
    alice.refresh_from_db()
    assert alice.bio == "Hello there" and alice.locked and alice.avatar.endswith(".webp")
    assert shown["avatar"].endswith(alice.avatar)
    assert path_of(shown["avatar_static"]) == static_avatar_url(alice)
    twin = client.get(path_of(shown["avatar_static"]))
    assert twin.status_code == 200 and twin["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(twin.content)).size == (256, 256)
    assert "immutable" in twin["Cache-Control"]
    assert client.get(path_of(shown["avatar_static"]).replace(".png", "x.png")).status_code == 404
    # A field not sent keeps its value; JSON works too.
    again = client.patch(
        "/api/v1/accounts/update_credentials",
        {"locked": False},
        content_type="application/json",
        headers=headers,
    ).json()
    assert again["display_name"] == "Alice A." and not again["locked"]


def test_unlocking_through_the_api_accepts_waiting_requests(client, alice, carol, token):
    update_profile(user=alice, display_name="Alice", bio="", locked=True)
    follow(follower=carol, followee=alice)
    assert FollowRequest.objects.filter(user_id=alice.pk).exists()
    client.patch(
        "/api/v1/accounts/update_credentials",
        "locked=0",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert Followee.objects.filter(user_id=carol.pk, followee_id=alice.pk).exists()


def test_update_credentials_refuses_what_the_settings_form_refuses(
    client, alice, token, make_token
):
    headers = {"Authorization": f"Bearer {token}"}
    too_long = client.patch(
        "/api/v1/accounts/update_credentials",
        {"display_name": "x" * 51, "note": "y" * 301},
        content_type="application/json",
        headers=headers,
    )
    assert too_long.status_code == 422
    assert set(too_long.json()["details"]) == {"display_name", "note"}
    from django.test.client import encode_multipart

    not_an_image = client.patch(
        "/api/v1/accounts/update_credentials",
        encode_multipart("B", {"avatar": images.upload("me.png", b"not an image", "image/png")}),
        content_type="multipart/form-data; boundary=B",
        headers=headers,
    )
    assert not_an_image.status_code == 422 and "avatar" in not_an_image.json()["details"]
    for body in ("[1, 2]", "{not json"):
        bad = client.patch(
            "/api/v1/accounts/update_credentials",
            body,
            content_type="application/json",
            headers=headers,
        )
        assert bad.status_code == 422 and bad.json()["error"]
    assert User.objects.get(pk=alice.pk).display_name == "Alice"
    reader = {"Authorization": f"Bearer {make_token(alice, 'read')}"}
    refused = client.patch("/api/v1/accounts/update_credentials", {}, headers=reader)
    assert refused.status_code == 403
    assert client.patch("/api/v1/accounts/update_credentials", {}).status_code == 401


def test_generated_avatars_have_a_png_static_twin(api, client, alice, token):
    shown = api.get(f"/api/v1/accounts/{alice.pk}").json()
    assert shown["avatar"].endswith(".svg")
    static = shown["avatar_static"]
    assert static.endswith("/alice.png") and path_of(static) == static_avatar_url(alice)
    picture = client.get(path_of(static))
    assert picture.status_code == 200 and picture["Content-Type"] == "image/png"
    assert "immutable" in picture["Cache-Control"]
    svg = client.get(path_of(shown["avatar"]))
    assert svg["Cache-Control"] == picture["Cache-Control"]
    image = Image.open(io.BytesIO(picture.content))
    assert image.format == "PNG" and image.size == (96, 96)
    mine = api.get("/api/v1/accounts/verify_credentials", token=token).json()
    assert mine["source"]["privacy"] == "public"
    assert mine["source"]["follow_requests_count"] == 0


def test_statuses_filters_keep_paging_whole(api, alice, carol, media_root):
    elsewhere = create_post(author=carol, text="carol's")
    mine = create_post(author=alice, text="a thread")
    self_reply = create_post(author=alice, text="its second part", in_reply_to=mine)
    to_carol = create_post(author=alice, text="a reply to carol", in_reply_to=elsewhere)
    shared = repost(user=alice, post=elsewhere)
    picture = create_post(
        author=alice, text="a picture", media=[prepare(images.upload("a.png", png(), "image/png"))]
    )
    path = f"/api/v1/accounts/{alice.pk}/statuses"

    def ids_of(**params):
        pages, url = [], path
        while url:
            response = api.get(url, limit=1, **params) if url == path else api.get(url)
            pages += [status["id"] for status in response.json()]
            url = links(response).get("next")
        return pages

    def key(post):
        return ids.decimal_of_key(post.timeline_key)

    everything = [key(p) for p in (picture, shared, to_carol, self_reply, mine)]
    assert ids_of() == everything
    assert ids_of(exclude_replies="true") == [key(p) for p in (picture, shared, self_reply, mine)]
    assert ids_of(exclude_reblogs="true") == [key(p) for p in (picture, to_carol, self_reply, mine)]
    assert ids_of(only_media="true") == [key(picture)]
    assert api.get(path, exclude_replies="maybe").status_code == 422


def test_suggestions_are_the_sites_who_to_follow(api, alice, bob, carol, token, make_token):
    dave = UserFactory(username="dave")
    follow(follower=alice, followee=bob)
    follow(follower=bob, followee=dave)
    refresh(alice.pk)
    shown = api.get("/api/v2/suggestions", token=token).json()
    assert shown and shown[0]["account"]["id"] == str(dave.pk)
    assert set(shown[0]) == {"source", "sources", "account"}
    assert api.delete(f"/api/v1/suggestions/{dave.pk}", token=token).json() == {}
    assert not Suggestion.objects.filter(user_id=alice.pk, suggested_id=dave.pk).exists()
    assert api.delete("/api/v1/suggestions/nobody", token=token).status_code == 200
    assert api.get("/api/v2/suggestions").status_code == 401


def test_filtered_statuses_keep_the_levels_rule(api, alice, bob, carol, make_token, media_root):
    """Bob follows Alice; Carol does not: her followers-only and direct posts stay hers."""
    picture = [prepare(images.upload("a.png", png(), "image/png"))]
    public = create_post(author=alice, text="for all", media=picture)
    quiet = create_post(author=alice, text="followers", visibility="followers", media=picture)
    create_post(author=alice, text="@bob only", visibility="direct", media=picture)
    path = f"/api/v1/accounts/{alice.pk}/statuses"

    def shown(token=None):
        found = api.get(path, token=token, only_media="true", exclude_replies="true").json()
        return [status["id"] for status in found]

    def key(post):
        return ids.decimal_of_key(post.timeline_key)

    assert shown() == [key(public)]
    assert shown(make_token(carol)) == [key(public)]
    assert key(quiet) in shown(make_token(bob))
