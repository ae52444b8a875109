"""``/public/``: everyone's recent public posts, for signed-out visitors too."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from posts.models import Post
from posts.services import create_post, repost
from relations.services import block, mute
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def post_ids(response) -> list[str]:
    assert response.status_code == 200
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def test_signed_out_visitors_see_public_posts_newest_first_and_nothing_else(alice, carol):
    first = create_post(author=alice, text="one")
    second = create_post(author=carol, text="two")
    for level in ("unlisted", "followers", "direct"):
        create_post(author=alice, text=f"@carol {level}", visibility=level)
    repost(user=carol, post=first)  # reposts are not listed again
    hidden = create_post(author=carol, text="hidden")
    Post.objects.filter(pk=hidden.pk).update(hidden_at=timezone.now())

    response = Client().get("/public/")

    assert post_ids(response) == [second.pk, first.pk]
    assert 'data-visibility="public"' in response.content.decode()


def test_people_blocked_either_way_and_muted_are_left_out_for_a_signed_in_reader(alice, bob, carol):
    dave = UserFactory(username="dave")
    by_alice = create_post(author=alice, text="alice")
    by_bob = create_post(author=bob, text="bob")
    create_post(author=carol, text="carol")
    create_post(author=dave, text="dave")
    block(user=carol, target=alice)  # alice is blocked by carol: neither sees the other
    block(user=alice, target=dave)
    mute(user=alice, target=bob)
    client = Client()
    client.force_login(alice)

    assert post_ids(client.get("/public/")) == [by_alice.pk]
    client.force_login(bob)
    assert len(post_ids(client.get("/public/"))) == 4
    assert by_bob.pk in post_ids(client.get("/public/"))


def test_pages_follow_the_cursor_both_ways_and_stay_full_around_hidden_posts(alice, settings):
    settings.FEED_PAGE_SIZE = 3
    posts = [create_post(author=alice, text=f"post {n}") for n in range(8)]
    for post in posts[2:5]:  # three in a row are not shown
        create_post(author=alice, text="@carol between", visibility="followers")
        Post.objects.filter(pk=post.pk).update(hidden_at=timezone.now())
    shown = [p.pk for p in reversed(posts) if p not in posts[2:5]]
    client = Client()

    seen, url = [], "/public/"
    while url:
        response = client.get(url)
        page = post_ids(response)
        assert len(page) == 3 or len(seen) + len(page) == len(shown)
        seen += page
        older = re.search(r'rel="next" href="([^"]+)"', response.content.decode())
        url = "/public/" + older.group(1).replace("&amp;", "&") if older else None
    assert seen == shown

    newer = client.get(f"/public/?after={Post.objects.get(pk=shown[-1]).timeline_key}")
    assert post_ids(newer) == shown[-4:-1]


def test_the_public_timeline_costs_the_same_queries_however_many_posts_it_shows(alice, carol):
    client = Client()
    client.force_login(carol)
    client.get("/public/")  # the first visit records last-active
    counts = []
    for total in (1, 20):
        while Post.objects.count() < total:
            create_post(author=alice, text="a post")
        with CaptureQueriesContext(connection) as queries:
            assert len(post_ids(client.get("/public/"))) == total
        counts.append(len(queries))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("cursor", ["before=nope", "after=%00", "before=" + "Z" * 17])
def test_a_malformed_cursor_is_a_400(client, cursor):
    assert client.get(f"/public/?{cursor}").status_code == 400
