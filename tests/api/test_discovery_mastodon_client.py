"""Mastodon.py against a live server for search, trends, the tag timeline, the start-up
endpoints and NodeInfo: the calls a real app makes, parsed as it parses them."""

import pytest
from mastodon.errors import MastodonAPIError, MastodonNotFoundError

from posts import ids
from posts.models import Visibility
from posts.services import create_post, like
from posts.tags import compute_trending
from relations.muted_words import mute_word
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def status_id(post) -> str:
    return ids.decimal_of_key(post.timeline_key)


def test_a_mastodon_client_searches_and_reads_trends_and_a_tag(live_server, sign_in):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    posts = [create_post(author=bob, text=f"#roses in the garden {n}") for n in range(5)]
    create_post(author=bob, text="#roses for followers", visibility=Visibility.FOLLOWERS)
    create_post(author=alice, text="#roses and #tulips")
    compute_trending()
    client = sign_in("alice")

    found = client.search_v2("garden")
    assert [str(status.id) for status in found.statuses] == [status_id(p) for p in posts[::-1]]
    assert client.search_v2("bob", result_type="accounts").accounts[0].acct == "bob"
    assert [tag.name for tag in client.search_v2("#roses").hashtags] == ["roses"]
    with pytest.raises(MastodonAPIError):
        client.search_v2("x" * 201)

    trending = client.trending_tags()
    assert [tag.name for tag in trending] == ["roses", "tulips"]
    assert trending[0].history[0].accounts == "2"
    assert client.trending_statuses() == [] and client.trending_links() == []
    assert client.tag("Roses").name == "roses"

    page = client.timeline_hashtag("roses", limit=2)
    seen = []
    while page:
        seen.extend(str(status.id) for status in page)
        page = client.fetch_next(page)
    assert seen[1:] == [status_id(p) for p in posts[::-1]]  # alice's own first; never the private


def test_a_mastodon_client_reads_what_it_asks_at_start_up(live_server, sign_in):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    liked = [create_post(author=bob, text=f"post {n}") for n in range(3)]
    for post in liked:
        like(user=alice, post=post)
    mute_word(user=alice, phrase="spoilers")
    client = sign_in("alice")

    assert client.preferences()["posting:default:visibility"] == "public"
    filters = client.filters_v2()
    assert filters[0].title == "spoilers" and filters[0].keywords[0].keyword == "spoilers"
    assert client.filters()[0].phrase == "spoilers"
    made = client.create_filter_v2(
        "No dragons", ["home"], "hide", keywords_attributes=[{"keyword": "dragons"}]
    )
    assert {f.title for f in client.filters_v2()} == {"spoilers", "dragons"}
    client.delete_filter_v2(made)
    assert [f.title for f in client.filters_v2()] == ["spoilers"]
    assert client.custom_emojis() == []
    assert client.announcements() == []
    assert client.bookmarks() == []
    assert client.followed_tags() == []
    assert client.lists() == []
    assert client.featured_tags() == []
    assert client.endorsements() == []
    assert client.domain_blocks() == []

    page = client.favourites(limit=2)
    seen = []
    while page:
        seen.extend(str(status.id) for status in page)
        page = client.fetch_next(page)
    assert seen == [status_id(p) for p in liked[::-1]]

    info = client.instance_nodeinfo()
    assert info.software.name == "feed"
    assert info.usage.users.total == 2
    with pytest.raises(MastodonNotFoundError):
        client.filter_v2(999999999)
