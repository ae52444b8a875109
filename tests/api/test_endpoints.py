"""The endpoints of the first slice through a Django test client: each answers what
the matching HTML page shows, in Mastodon's shapes."""

import re

import pytest

from api.entities import MASTODON_LEVELS
from feed_project.pagination import Cursor
from posts import ids
from posts.models import MAX_POST_LENGTH, Post
from posts.services import create_post, repost
from relations.services import block
from tests.factories import UserFactory
from timelines.home import home_feed

pytestmark = pytest.mark.django_db
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


def status_id(post: Post) -> str:
    return ids.decimal_of_key(post.timeline_key)


def test_instance_says_it_is_mastodon_compatible_with_the_sites_limits(api):
    for path in ("/api/v1/instance", "/api/v2/instance", "/api/v2/instance/"):
        answer = api.get(path)
        assert answer.status_code == 200, path
        body = answer.json()
        assert body["version"] == "4.3.0 (compatible; Feed)"
        assert body["api_versions"] == {"mastodon": 2}
        statuses = body["configuration"]["statuses"]
        assert statuses["max_characters"] == MAX_POST_LENGTH
        assert statuses["max_media_attachments"] == 4


def test_verify_credentials_and_an_account_by_id(api, alice, token):
    me = api.get("/api/v1/accounts/verify_credentials/", token=token).json()
    assert me["id"] == str(alice.pk) and me["username"] == me["acct"] == "alice"
    assert me["source"]["note"] == alice.bio and me["fields"] == []
    assert me["created_at"].endswith("T00:00:00.000Z")
    assert me["avatar"].startswith("http://testserver/") and me["avatar_static"]
    seen = api.get(f"/api/v1/accounts/{alice.pk}").json()
    assert seen["username"] == "alice" and "source" not in seen


def test_post_reply_read_and_delete(api, alice, bob, token, make_token):
    posted = api.post(
        "/api/v1/statuses",
        {"status": "Hello @bob #Tea https://example.com", "spoiler_text": "cw"},
        token=token,
    )
    assert posted.status_code == 200, posted.content
    status = posted.json()
    post = Post.objects.get(author=alice)
    assert status["id"] == status_id(post)
    assert ISO.match(status["created_at"])
    assert status["sensitive"] is True and status["spoiler_text"] == "cw"
    assert status["mentions"] == [
        {"id": str(bob.pk), "username": "bob", "acct": "bob", "url": "http://testserver/@bob/"}
    ]
    assert status["tags"][0]["name"] == "tea"
    assert 'href="http://testserver/@bob/"' in status["content"]
    assert 'href="https://example.com"' in status["content"]
    assert status["account"]["id"] == str(alice.pk) and status["visibility"] == "public"

    bob_token = make_token(bob)
    reply = api.post(
        "/api/v1/statuses",
        {"status": "@alice hi back", "in_reply_to_id": status["id"], "visibility": "private"},
        token=bob_token,
    ).json()
    assert reply["in_reply_to_id"] == status["id"]
    assert reply["in_reply_to_account_id"] == str(alice.pk)
    assert reply["visibility"] == "private"
    assert Post.objects.get(author=bob).visibility == "followers"
    read = api.get(f"/api/v1/statuses/{status['id']}/", token=bob_token).json()
    assert read["replies_count"] == 1

    deleted = api.delete(f"/api/v1/statuses/{status['id']}", token=token)
    assert deleted.status_code == 200 and deleted.json()["text"].startswith("Hello @bob")
    assert api.get(f"/api/v1/statuses/{status['id']}", token=token).status_code == 404


def test_a_direct_post_is_shown_only_to_whom_it_addresses(api, alice, bob, carol, make_token):
    direct = api.post(
        "/api/v1/statuses",
        {"status": "@bob just you", "visibility": "direct"},
        token=make_token(alice),
    ).json()
    assert direct["visibility"] == "direct"
    path = f"/api/v1/statuses/{direct['id']}"
    assert api.get(path, token=make_token(bob)).status_code == 200
    assert api.get(path, token=make_token(carol)).status_code == 404
    assert api.get(path).status_code == 404
    home = api.get("/api/v1/timelines/home", token=make_token(carol)).json()
    assert direct["id"] not in [s["id"] for s in home]
    public = api.get("/api/v1/timelines/public").json()
    assert direct["id"] not in [s["id"] for s in public]


def test_every_site_level_has_a_mastodon_name_and_back():
    assert set(MASTODON_LEVELS.values()) == {"public", "unlisted", "private", "direct"}


def test_home_is_the_sites_home_feed_with_reposts_as_reblogs(api, alice, bob, carol, make_token):
    create_post(author=alice, text="one")
    shared = create_post(author=carol, text="carol's")
    repost(user=alice, post=shared)
    create_post(author=alice, text="three")
    bob.refresh_from_db()
    answer = api.get("/api/v1/timelines/home", token=make_token(bob))
    assert answer.status_code == 200
    statuses = answer.json()
    site = home_feed(reader=bob, cursor=Cursor(), limit=20).items
    assert [s["id"] for s in statuses] == [ids.decimal_of_key(item.key) for item in site]
    reblog = statuses[1]
    assert reblog["account"]["username"] == "alice" and reblog["content"] == ""
    assert reblog["reblog"]["id"] == status_id(shared)
    assert reblog["reblog"]["account"]["username"] == "carol"
    assert 'rel="prev"' in answer["Link"] and "min_id=" + statuses[0]["id"] in answer["Link"]


def test_paging_home_with_max_id_since_id_and_min_id(api, alice, bob, make_token):
    posts = [create_post(author=alice, text=f"post {n}") for n in range(7)]
    newest_first = [status_id(post) for post in reversed(posts)]
    token = make_token(bob)

    def page(**params):
        return [s["id"] for s in api.get("/api/v1/timelines/home", token=token, **params).json()]

    assert page(limit=3) == newest_first[:3]
    assert page(limit=3, max_id=newest_first[2]) == newest_first[3:6]
    assert page(limit=3, since_id=newest_first[5]) == newest_first[:3]
    assert page(limit=3, min_id=newest_first[5]) == newest_first[2:5]
    assert page(limit=10, min_id=newest_first[6], max_id=newest_first[2]) == newest_first[3:6]
    first = api.get("/api/v1/timelines/home", token=token, limit=3)
    assert f'max_id={newest_first[2]}>; rel="next"' in first["Link"]
    assert "limit=3" in first["Link"]


def test_an_accounts_statuses_page_by_status_ids_and_blocks_hide_them(
    api, alice, bob, carol, make_token
):
    posts = [create_post(author=alice, text=f"mine {n}") for n in range(5)]
    other = create_post(author=carol, text="between")  # a cursor from another author's post
    newest_first = [status_id(post) for post in reversed(posts)]
    path = f"/api/v1/accounts/{alice.pk}/statuses"
    shown = api.get(path, limit=2).json()
    assert [s["id"] for s in shown] == newest_first[:2]
    older = api.get(path, limit=10, max_id=status_id(other)).json()
    assert [s["id"] for s in older] == newest_first
    assert api.get(path, pinned="true").json() == []
    block(user=alice, target=carol)
    assert api.get(path, token=make_token(carol)).json() == []


def test_public_timeline_lists_public_posts_only(api, alice):
    shown = create_post(author=alice, text="for all")
    create_post(author=alice, text="quiet", visibility="unlisted")
    statuses = api.get("/api/v1/timelines/public", local="true").json()
    assert [s["id"] for s in statuses] == [status_id(shown)]


def test_the_openapi_document_is_generated_from_the_code(api):
    doc = api.get("/api/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    assert "/api/v1/timelines/home" in doc["paths"] and "/api/v1/statuses" in doc["paths"]


def test_an_api_token_refreshes_last_active_as_the_site_does(api, make_token):
    person = UserFactory(username="away", last_active_at=None)
    api.get("/api/v1/accounts/verify_credentials", token=make_token(person))
    person.refresh_from_db()
    assert person.last_active_at is not None


def test_a_home_page_costs_the_same_queries_whatever_it_holds(api, bob, make_token):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from relations.services import follow

    token = make_token(bob)
    api.get("/api/v1/timelines/home", token=token)  # the inbox built, last-active written

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get("/api/v1/timelines/home", token=token).status_code == 200
        return len(captured)

    author = UserFactory()
    follow(follower=bob, followee=author)
    create_post(author=author, text="one")
    few = queries()
    for n in range(6):
        someone = UserFactory()
        follow(follower=bob, followee=someone)
        create_post(author=someone, text=f"@bob hello {n} #tag")
    assert queries() <= few + 1  # the mentioned people, once for the page


def test_urls_are_https_behind_a_tls_proxy(client, alice, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # HTTPS=1
    create_post(author=alice, text="#secure")
    proxied = {"X-Forwarded-Proto": "https", "Host": "testserver"}  # as the proxy sends
    statuses = client.get("/api/v1/timelines/public", headers=proxied)
    status = statuses.json()[0]
    assert status["url"].startswith("https://testserver/posts/")
    assert status["account"]["avatar"].startswith("https://testserver/")
    assert status["tags"][0]["url"].startswith("https://testserver/tags/")
