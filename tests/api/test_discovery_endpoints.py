"""Search, trends, the tag timeline, the start-up endpoints and the well-known documents,
through the API: what each answers, who may see what, and bad input as JSON errors."""

import pytest

from posts import ids, media
from posts.models import Visibility
from posts.services import create_post, like
from posts.tags import compute_trending
from relations.muted_words import mute_word
from relations.services import block, follow, unfollow
from tests.factories import UserFactory
from tests.images import image_bytes, upload

pytestmark = pytest.mark.django_db


def status_id(post):
    return ids.decimal_of_key(post.timeline_key)


@pytest.fixture
def people():
    return UserFactory(username="alice"), UserFactory(username="bob"), UserFactory(username="eve")


# Search


def test_search_finds_people_posts_and_tags(api, make_token, people):
    alice, bob, _ = people
    post = create_post(author=bob, text="gardening today #roses")
    token = make_token(alice)
    found = api.get("/api/v2/search", token=token, q="gardening").json()
    assert [status["id"] for status in found["statuses"]] == [status_id(post)]
    assert (
        api.get("/api/v2/search", token=token, q="bob").json()["accounts"][0]["username"] == "bob"
    )
    tags = api.get("/api/v2/search", token=token, q="#roses", type="hashtags").json()
    assert tags == {
        "accounts": [],
        "statuses": [],
        "hashtags": [
            {
                "name": "roses",
                "url": "http://testserver/tags/roses/",
                "history": [],
                "following": False,
            }
        ],
    }


def test_search_finds_chinese_text(api, make_token, people):
    alice, bob, _ = people
    post = create_post(author=bob, text="今天天气很好")
    found = api.get("/api/v2/search", token=make_token(alice), q="天气", type="statuses").json()
    assert [status["id"] for status in found["statuses"]] == [status_id(post)]


def test_search_never_finds_a_followers_only_post_for_a_stranger(api, make_token, people):
    alice, bob, eve = people
    follow(follower=alice, followee=bob)
    create_post(author=bob, text="secret gardening", visibility=Visibility.FOLLOWERS)
    for reader in (alice, eve):
        found = api.get("/api/v2/search", token=make_token(reader), q="gardening").json()
        assert found["statuses"] == []  # search lists public posts only, as the page


def test_search_hides_the_blocked_and_muted_words(api, make_token, people):
    alice, bob, eve = people
    create_post(author=bob, text="gardening with bob")
    create_post(author=eve, text="gardening with spoilers")
    block(user=alice, target=bob)
    mute_word(user=alice, phrase="spoilers")
    found = api.get("/api/v2/search", token=make_token(alice), q="gardening").json()
    assert found["statuses"] == []
    assert api.get("/api/v2/search", token=make_token(alice), q="bob").json()["accounts"] == []


def test_search_pages_statuses_by_max_id_and_offset_past_zero_is_empty(api, make_token, people):
    alice, bob, _ = people
    posts = [create_post(author=bob, text=f"gardening {n}") for n in range(3)]
    token = make_token(alice)
    first = api.get("/api/v2/search", token=token, q="gardening", type="statuses", limit=2).json()
    assert [s["id"] for s in first["statuses"]] == [status_id(p) for p in posts[:0:-1]]
    rest = api.get(
        "/api/v2/search", token=token, q="gardening", type="statuses", max_id=status_id(posts[1])
    ).json()
    assert [s["id"] for s in rest["statuses"]] == [status_id(posts[0])]
    past = api.get("/api/v2/search", token=token, q="gardening", offset=20).json()
    assert past == {"accounts": [], "statuses": [], "hashtags": []}


def test_search_refuses_what_the_page_refuses(api, make_token, people):
    token = make_token(people[0])
    too_long = api.get("/api/v2/search", token=token, q="x" * 201)
    assert too_long.status_code == 422 and "200" in too_long.json()["error"]
    assert api.get("/api/v2/search", token=token).status_code == 422  # no q
    assert api.get("/api/v2/search", token=token, q="a", type="people").status_code == 422
    assert api.get("/api/v2/search", token=token, q="a", max_id="nope").status_code == 422
    assert (
        api.get("/api/v2/search", token=make_token(people[0], "read:accounts"), q="a").status_code
        == 403
    )
    assert api.get("/api/v2/search", token="bad", q="a").status_code == 401


# Trends and tags


def test_trending_tags_are_the_sites(api, people):
    alice, bob, _ = people
    create_post(author=alice, text="#roses and #tulips")
    create_post(author=bob, text="#roses")
    compute_trending()
    trends = api.get("/api/v1/trends/tags").json()
    assert [tag["name"] for tag in trends] == ["roses", "tulips"]
    assert trends[0]["history"][0]["accounts"] == "2"
    assert api.get("/api/v1/trends", limit=1).json() == trends[:1]
    assert api.get("/api/v1/trends/tags", offset=1).json() == trends[1:]
    assert api.get("/api/v1/tags/roses").json() == trends[0]
    found = api.get("/api/v2/search", q="#tulips", type="hashtags").json()["hashtags"]
    assert found == [trends[1]]
    assert api.get("/api/v1/trends/statuses").json() == []
    assert api.get("/api/v1/trends/links").json() == []


def test_the_tag_timeline_pages_and_keeps_the_rules(api, make_token, people):
    alice, bob, eve = people
    posts = [create_post(author=bob, text=f"#roses number {n}") for n in range(3)]
    create_post(author=bob, text="#roses for followers", visibility=Visibility.FOLLOWERS)
    create_post(author=eve, text="#roses by eve")
    block(user=alice, target=eve)
    token = make_token(alice)
    first = api.get("/api/v1/timelines/tag/Roses", token=token, limit=2)
    assert [s["id"] for s in first.json()] == [status_id(p) for p in posts[:0:-1]]
    assert 'rel="next"' in first["Link"]
    rest = api.get("/api/v1/timelines/tag/roses", token=token, max_id=status_id(posts[1]))
    assert [s["id"] for s in rest.json()] == [status_id(posts[0])]
    anonymous = api.get("/api/v1/timelines/tag/roses").json()
    assert len(anonymous) == 4  # eve's too, and never the followers-only post


def test_the_tag_timeline_takes_any_all_and_none(api, people):
    _, bob, _ = people
    roses = create_post(author=bob, text="#roses")
    both = create_post(author=bob, text="#roses #tulips")
    tulips = create_post(author=bob, text="#tulips")
    path = "/api/v1/timelines/tag/roses"
    assert [s["id"] for s in api.get(path, **{"any[]": "tulips"}).json()] == [
        status_id(p) for p in (tulips, both, roses)
    ]
    assert [s["id"] for s in api.get(path, **{"all[]": "tulips"}).json()] == [status_id(both)]
    assert [s["id"] for s in api.get(path, **{"none[]": "tulips"}).json()] == [status_id(roses)]


def test_the_tag_timeline_keeps_posts_with_images_when_asked(api, people, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    _, bob, _ = people
    pictured = create_post(
        author=bob,
        text="#roses in a picture",
        media=[media.prepare(upload("rose.jpg", image_bytes()))],
    )
    create_post(author=bob, text="#roses in words")
    shown = api.get("/api/v1/timelines/tag/roses", only_media="true").json()
    assert [s["id"] for s in shown] == [status_id(pictured)]
    assert len(api.get("/api/v1/timelines/tag/roses").json()) == 2


def test_a_tag_and_bad_tags(api, make_token):
    assert api.get("/api/v1/tags/Roses").json() == {
        "name": "roses",
        "url": "http://testserver/tags/roses/",
        "history": [],
        "following": False,
    }
    assert api.get("/api/v1/tags/%23%23").status_code == 404
    token = make_token(UserFactory(username="follower"))
    refused = api.post("/api/v1/tags/roses/follow", token=token)
    assert refused.status_code == 422 and "not possible" in refused.json()["error"]
    assert api.post("/api/v1/tags/roses/unfollow", token=token).json()["following"] is False
    assert api.post("/api/v1/tags/roses/follow").status_code == 401
    assert api.get("/api/v1/timelines/tag/123").status_code == 404
    assert api.get("/api/v1/timelines/tag/roses", max_id="x").status_code == 422


# Start-up endpoints


def test_preferences_and_the_empty_collections(api, make_token, people):
    token = make_token(people[0])
    prefs = api.get("/api/v1/preferences", token=token).json()
    assert prefs["posting:default:visibility"] == "public"
    assert prefs["reading:expand:spoilers"] is False
    for path in (
        "/api/v1/custom_emojis",
        "/api/v1/announcements",
        "/api/v1/lists",
        "/api/v1/followed_tags",
        "/api/v1/bookmarks",
        "/api/v1/endorsements",
        "/api/v1/featured_tags",
        "/api/v1/domain_blocks",
    ):
        answer = api.get(path, token=token)
        assert answer.status_code == 200 and answer.json() == [], path
    assert api.get("/api/v1/preferences").status_code == 401
    assert api.get("/api/v1/bookmarks", token=token, max_id="x").status_code == 422


def test_filters_are_the_muted_words(api, make_token, people):
    alice = people[0]
    word = mute_word(user=alice, phrase="Spoilers", expires_in_days=2)
    cjk = mute_word(user=alice, phrase="剧透")
    token = make_token(alice)
    filters = api.get("/api/v2/filters", token=token).json()
    assert [f["title"] for f in filters] == ["剧透", "spoilers"]
    assert filters[1]["filter_action"] == "hide"
    assert filters[1]["keywords"] == [
        {"id": str(word.pk), "keyword": "spoilers", "whole_word": True}
    ]
    assert filters[1]["expires_at"].endswith("Z")
    assert filters[0]["keywords"][0]["whole_word"] is False
    assert set(filters[0]["context"]) >= {"home", "public", "thread"}
    one = api.get(f"/api/v2/filters/{cjk.pk}", token=token).json()
    assert one == filters[0]
    v1 = api.get("/api/v1/filters", token=token).json()
    assert [(f["phrase"], f["whole_word"]) for f in v1] == [("剧透", False), ("spoilers", True)]
    others = make_token(people[1])
    assert api.get(f"/api/v2/filters/{cjk.pk}", token=others).status_code == 404
    assert api.get("/api/v2/filters/nope", token=token).status_code == 404


def test_a_filter_made_or_deleted_is_a_muted_word_made_or_taken_back(api, make_token, people):
    alice, bob, _ = people
    token = make_token(alice)
    made = api.post(
        "/api/v2/filters",
        {
            "title": "No spoilers",
            "context": ["home"],
            "filter_action": "warn",
            "expires_in": 3600,
            "keywords_attributes": [{"keyword": "Spoilers", "whole_word": False}],
        },
        token=token,
    )
    assert made.status_code == 200, made.content
    shown = made.json()
    assert shown["title"] == "spoilers" and shown["filter_action"] == "hide"
    assert shown["keywords"][0]["whole_word"] is True  # the site's rule for a latin phrase
    create_post(author=bob, text="big spoilers here")
    assert api.get("/api/v1/timelines/public", token=token).json() == []
    by_title = api.post("/api/v2/filters", {"title": "dragons", "context": ["home"]}, token=token)
    assert by_title.json()["title"] == "dragons"
    v1 = api.post(
        "/api/v1/filters", {"phrase": "剧透", "context[]": ["home"]}, token=token, json=False
    )
    assert v1.status_code == 200 and v1.json()["whole_word"] is False
    assert len(api.get("/api/v2/filters", token=token).json()) == 3

    assert api.delete(f"/api/v2/filters/{shown['id']}", token=token).json() == {}
    assert len(api.get("/api/v1/timelines/public", token=token).json()) == 1
    assert api.delete(f"/api/v2/filters/{shown['id']}", token=token).status_code == 404
    assert (
        api.delete(f"/api/v1/filters/{v1.json()['id']}", token=make_token(bob)).status_code == 404
    )
    assert api.delete(f"/api/v1/filters/{v1.json()['id']}", token=token).status_code == 200

    for body in (
        {"title": ""},
        {"title": "x" * 101},
        {"title": "a", "expires_in": -5},
        {"title": "a", "keywords_attributes": [{"keyword": "a"}, {"keyword": "b"}]},
        {"title": "a", "keywords_attributes": "nope"},
    ):
        refused = api.post("/api/v2/filters", body, token=token)
        assert refused.status_code == 422 and refused.json()["error"], body
    assert api.post("/api/v1/filters", {}, token=token).status_code == 422
    assert (
        api.post("/api/v2/filters", {"title": "a"}, token=make_token(alice, "read")).status_code
        == 403
    )


def test_favourites_are_the_likes_latest_first_paged_across_pages(api, make_token, people):
    alice, bob, _ = people
    posts = [create_post(author=bob, text=f"post {n}") for n in range(5)]
    for post in reversed(posts):  # liked oldest post last
        like(user=alice, post=post)
    token = make_token(alice)
    seen, params = [], {"limit": 2}
    while True:
        page = api.get("/api/v1/favourites", token=token, **params)
        assert page.status_code == 200
        seen.append([s["id"] for s in page.json()])
        assert all(s["favourited"] for s in page.json())
        if 'rel="next"' not in page.get("Link", ""):
            break
        params = {"limit": 2, "max_id": page["Link"].split("max_id=")[1].split(">")[0]}
    assert seen == [
        [status_id(posts[0]), status_id(posts[1])],
        [status_id(posts[2]), status_id(posts[3])],
        [status_id(posts[4])],
    ]
    back = page["Link"].split("min_id=")[1].split(">")[0]
    above = api.get("/api/v1/favourites", token=token, min_id=back, limit=2).json()
    assert [s["id"] for s in above] == seen[1]


def test_favourites_leave_out_what_the_liker_may_no_longer_see(api, make_token, people):
    alice, bob, eve = people
    follow(follower=alice, followee=bob)
    private = create_post(author=bob, text="for followers", visibility=Visibility.FOLLOWERS)
    public = create_post(author=eve, text="eve's")
    like(user=alice, post=private)
    like(user=alice, post=public)
    token = make_token(alice)
    assert len(api.get("/api/v1/favourites", token=token).json()) == 2
    block(user=alice, target=eve)
    unfollow(follower=alice, followee=bob)
    assert api.get("/api/v1/favourites", token=token).json() == []
    assert api.get("/api/v1/favourites", token=token, max_id="1" * 41).status_code == 422
    assert api.get("/api/v1/favourites", token=make_token(bob)).json() == []


# Instance and well-known documents


def test_nodeinfo_host_meta_and_webfinger(client, people):
    links = client.get("/.well-known/nodeinfo").json()["links"]
    assert links[0]["href"] == "http://testserver/nodeinfo/2.0"
    info = client.get("/nodeinfo/2.0").json()
    assert info["software"]["name"] == "feed"
    assert info["usage"]["users"]["total"] == 3
    assert info["protocols"] == []
    meta = client.get("/.well-known/host-meta")
    assert b"/.well-known/webfinger?resource={uri}" in meta.content
    found = client.get("/.well-known/webfinger", {"resource": "acct:alice@testserver"}).json()
    assert found["subject"] == "acct:alice@testserver"
    assert found["links"][0]["href"] == "http://testserver/@alice/"
    for resource in ("acct:nobody@testserver", "acct:alice@elsewhere", ""):
        missing = client.get("/.well-known/webfinger", {"resource": resource})
        assert missing.status_code == 404 and "error" in missing.json()


def test_the_instance_names_its_contact_and_urls(api, people):
    admin = people[2]
    admin.is_superuser = True
    admin.save()
    v2 = api.get("/api/v2/instance").json()
    assert v2["contact"]["account"]["username"] == "eve"
    assert v2["configuration"]["urls"]["streaming"] == "ws://testserver"  # api.streaming
    assert "vapid" not in v2["configuration"]
    v1 = api.get("/api/v1/instance").json()
    assert v1["contact_account"]["username"] == "eve"
    assert v1["urls"] == {"streaming_api": "ws://testserver"}
    assert v1["stats"]["user_count"] == 3


def test_search_resolves_links_to_the_sites_posts_and_people(api, make_token, people):
    alice, bob, _ = people
    post = create_post(author=bob, text="a post to link")
    private = create_post(author=bob, text="for followers", visibility=Visibility.FOLLOWERS)
    token = make_token(alice)
    link = f"http://testserver/posts/{post.pk}/"
    found = api.get("/api/v2/search", token=token, q=link, resolve="true").json()
    assert [s["id"] for s in found["statuses"]] == [status_id(post)]
    hidden = api.get("/api/v2/search", token=token, q=f"http://testserver/posts/{private.pk}/")
    assert hidden.json()["statuses"] == []
    profile = api.get("/api/v2/search", token=token, q="http://testserver/@bob/").json()
    assert [a["username"] for a in profile["accounts"]] == ["bob"]
    for junk in (
        "http://testserver/posts/nope/",
        "http://testserver/nowhere",
        "http://testserver/@nobody/",
    ):
        assert api.get("/api/v2/search", token=token, q=junk).json()["statuses"] == []
    by_address = api.get("/api/v2/search", token=token, q="bob@testserver", type="accounts")
    assert [a["username"] for a in by_address.json()["accounts"]] == ["bob"]
    block(user=bob, target=alice)
    blocked = api.get("/api/v2/search", token=token, q="http://testserver/@bob/").json()
    assert blocked["accounts"] == []
