"""Replies: posting one, the thread on the detail page, and what you may not reply to."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from feed_project import sharding
from posts import selectors
from posts.models import Like, Post
from posts.services import create_post, delete_post, like, repost
from relations.services import block, follow
from tests.factories import UserFactory

NEW_POST = "/posts/new/"


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def link(response, rel: str) -> str | None:
    found = re.search(rf'<a rel="{rel}" href="([^"]+)"', response.content.decode())
    return found.group(1) if found else None


def chain(author, depth: int) -> list[Post]:
    """A thread ``depth`` posts long, each replying to the one before."""
    posts = [create_post(author=author, text="root")]
    for n in range(1, depth):
        posts.append(create_post(author=author, text=f"reply {n}", in_reply_to=posts[-1]))
    return posts


@pytest.fixture
def carol_post(carol):
    return create_post(author=carol, text="Carol asks a question")


@pytest.mark.embedded
def test_replying_from_the_detail_page_publishes_a_reply_and_shows_it_in_the_thread(
    alice_client, alice, carol_post
):
    page = alice_client.get(f"/posts/{carol_post.pk}/").content.decode()
    assert 'id="reply"' in page
    assert f'name="in_reply_to" value="{carol_post.pk}"' in page

    response = alice_client.post(NEW_POST, {"text": "An answer", "in_reply_to": carol_post.pk})

    assert response.status_code == 302
    assert response["Location"] == f"/posts/{carol_post.pk}/"
    reply = Post.objects.get(author=alice)
    assert reply.in_reply_to_id == carol_post.pk
    carol_post.refresh_from_db()
    assert carol_post.reply_count == 1
    detail = alice_client.get(f"/posts/{carol_post.pk}/")
    assert post_ids(detail) == [carol_post.pk, reply.pk]
    assert 'Reply</span> <span class="count">1</span>' in detail.content.decode()


def test_a_reply_shows_what_it_replies_to_above_it(alice_client, alice, carol_post):
    reply = create_post(author=alice, text="An answer", in_reply_to=carol_post)

    response = alice_client.get(f"/posts/{reply.pk}/")

    assert post_ids(response) == [carol_post.pk, reply.pk]


def test_replying_to_a_deleted_post_is_a_404_and_writes_nothing(alice_client, carol_post):
    delete_post(post=carol_post)

    response = alice_client.post(NEW_POST, {"text": "Too late", "in_reply_to": carol_post.pk})

    assert response.status_code == 404
    assert Post.objects.count() == 1


def test_replying_to_a_hidden_post_is_a_404_and_writes_nothing(alice_client, carol_post):
    Post.objects.filter(pk=carol_post.pk).update(hidden_at=timezone.now())

    response = alice_client.post(NEW_POST, {"text": "Hidden", "in_reply_to": carol_post.pk})

    assert response.status_code == 404
    assert Post.objects.count() == 1


@pytest.mark.parametrize("who_blocks", ["author", "replier"])
def test_replying_to_someone_blocked_either_way_is_a_404_and_writes_nothing(
    alice_client, alice, carol, carol_post, who_blocks
):
    if who_blocks == "author":
        block(user=carol, target=alice)
    else:
        block(user=alice, target=carol)

    response = alice_client.post(NEW_POST, {"text": "Hello?", "in_reply_to": carol_post.pk})

    assert response.status_code == 404
    assert Post.objects.count() == 1
    carol_post.refresh_from_db()
    assert carol_post.reply_count == 0


@pytest.mark.parametrize(
    ("value", "status"),
    [
        # Well formed or not, an id of no post is "no such post", as on /posts/<id>/.
        ("0000000000000000", 404),
        ("x" * 16, 404),
        ("ZZZZ", 404),
        # Longer than the form field allows: the form itself is refused.
        ("x" * 5000, 400),
    ],
)
def test_replying_to_a_post_that_does_not_exist_is_refused_and_writes_nothing(
    alice_client, value, status
):
    response = alice_client.post(NEW_POST, {"text": "Hello?", "in_reply_to": value})

    assert response.status_code == status
    assert not Post.objects.exists()


def test_the_thread_shows_ancestors_oldest_first_then_the_post_then_its_replies(
    alice_client, alice, bob
):
    root, middle, post = chain(alice, 3)
    first = create_post(author=bob, text="first reply", in_reply_to=post)
    second = create_post(author=bob, text="second reply", in_reply_to=post)

    response = alice_client.get(f"/posts/{post.pk}/")

    # Replies newest first, like every other list of the site.
    assert post_ids(response) == [root.pk, middle.pk, post.pk, second.pk, first.pk]


def test_ancestors_come_from_two_queries_however_deep_the_thread(alice, django_assert_num_queries):
    posts = chain(alice, 25)

    # The posts up the thread (by the ids the reply keeps), and which of them
    # the viewer may read (level, blocks either way).
    with django_assert_num_queries(2):
        ancestors = selectors.ancestors_of(posts[-1], viewer_id=alice.pk)

    # At most 20, the nearest ones, oldest first.
    assert [a.pk for a in ancestors] == [p.pk for p in posts[-21:-1]]


def test_a_deleted_or_blocked_ancestor_is_unavailable_and_the_thread_goes_on(
    alice_client, alice, carol
):
    root = create_post(author=alice, text="root")
    gone = create_post(author=alice, text="gone", in_reply_to=root)
    by_carol = create_post(author=carol, text="carol's", in_reply_to=gone)
    post = create_post(author=alice, text="the post", in_reply_to=by_carol)
    delete_post(post=gone)
    block(user=alice, target=carol)

    response = alice_client.get(f"/posts/{post.pk}/")

    assert post_ids(response) == [root.pk, post.pk]
    assert response.content.decode().count("This post is unavailable.") == 2


def test_an_ancestor_of_a_level_not_for_the_viewer_is_unavailable(client, alice, bob, carol):
    # A reply is at most as open as its parent: bob's answer to carol's post for
    # her followers is for his followers. Alice follows bob, not carol.
    root = create_post(author=carol, text="root")
    for_followers = create_post(
        author=carol, text="for followers", in_reply_to=root, visibility="followers"
    )
    post = create_post(author=bob, text="the post", in_reply_to=for_followers)
    follow(follower=alice, followee=bob)
    follow(follower=bob, followee=carol)

    client.force_login(alice)
    response = client.get(f"/posts/{post.pk}/")
    assert post_ids(response) == [root.pk, post.pk]
    assert "This post is unavailable." in response.content.decode()
    client.force_login(bob)
    assert post_ids(client.get(f"/posts/{post.pk}/")) == [root.pk, for_followers.pk, post.pk]


def test_replies_are_cursor_paginated_newest_first(alice_client, alice, carol_post):
    replies = [
        create_post(author=alice, text=f"reply {n}", in_reply_to=carol_post).pk for n in range(23)
    ]

    first = alice_client.get(f"/posts/{carol_post.pk}/")
    assert post_ids(first) == [carol_post.pk, *reversed(replies[3:])]
    assert link(first, "prev") is None

    second = alice_client.get(f"/posts/{carol_post.pk}/" + link(first, "next"))
    assert post_ids(second) == [carol_post.pk, *reversed(replies[:3])]
    assert link(second, "next") is None
    back = alice_client.get(f"/posts/{carol_post.pk}/" + link(second, "prev"))
    assert post_ids(back) == post_ids(first)


def test_a_bad_replies_cursor_is_a_400(alice_client, carol_post):
    assert alice_client.get(f"/posts/{carol_post.pk}/?before=nope").status_code == 400


def test_replies_by_people_blocked_either_way_are_hidden(alice_client, alice, bob, carol_post):
    dave = UserFactory(username="dave")
    by_bob = create_post(author=bob, text="bob's reply", in_reply_to=carol_post)
    by_dave = create_post(author=dave, text="dave's reply", in_reply_to=carol_post)
    block(user=alice, target=bob)
    block(user=dave, target=alice)

    assert post_ids(alice_client.get(f"/posts/{carol_post.pk}/")) == [carol_post.pk]
    # Others still see both.
    visitor = post_ids(alice_client.__class__().get(f"/posts/{carol_post.pk}/"))
    assert visitor == [carol_post.pk, by_dave.pk, by_bob.pk]


def test_the_detail_of_a_post_whose_author_blocks_you_is_a_404(alice_client, alice, carol_post):
    block(user=carol_post.author, target=alice)

    assert alice_client.get(f"/posts/{carol_post.pk}/").status_code == 404


def test_the_detail_of_a_repost_is_the_originals(alice_client, alice, carol_post):
    shared = repost(user=alice, post=carol_post)

    response = alice_client.get(f"/posts/{shared.pk}/")

    assert response.status_code == 302
    assert response["Location"] == f"/posts/{carol_post.pk}/"


def test_deleting_a_reply_takes_it_out_of_the_thread_and_the_count(alice_client, alice, carol_post):
    reply = create_post(author=alice, text="oops", in_reply_to=carol_post)

    alice_client.post(f"/posts/{reply.pk}/delete/")

    carol_post.refresh_from_db()
    assert carol_post.reply_count == 0
    assert post_ids(alice_client.get(f"/posts/{carol_post.pk}/")) == [carol_post.pk]


def test_detail_query_count_does_not_grow_with_the_thread(client, alice, bob, carol):
    """Ancestors, replies, likes and reposts on the page: the same queries for 2 as for 20."""
    client.force_login(carol)
    root = create_post(author=alice, text="root")
    post = create_post(author=bob, text="the post", in_reply_to=root)
    client.get(f"/posts/{post.pk}/")  # the session's first request records last-active
    counts = []
    for total in (2, 20):
        while Post.objects.filter(in_reply_to=post).count() < total:
            n = Post.objects.filter(in_reply_to=post).count()
            reply = create_post(author=(alice, bob)[n % 2], text=f"reply {n}", in_reply_to=post)
            like(user=carol, post=reply)
            repost(user=carol, post=reply)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/posts/{post.pk}/")
        assert len(post_ids(response)) == total + 2
        assert response.content.decode().count("Liked</span> <span") == total
        counts.append(len(queries))
    assert counts[0] == counts[1]
    # Session, user, moderator permission (2), the post, the block check,
    # ancestors and their blocks, replies, liked, reposted, images; on Citus
    # one more: the viewer's muted words, read before the replies.
    assert counts[0] <= (13 if sharding.on_citus(connection) else 12), counts
    assert Like.objects.count() == 20


def test_a_rejected_reply_keeps_the_post_it_replies_to_in_the_form(alice_client, carol_post):
    response = alice_client.post(NEW_POST, {"text": "x" * 501, "in_reply_to": carol_post.pk})

    assert response.status_code == 400
    assert f'name="in_reply_to" value="{carol_post.pk}"' in response.content.decode()
    assert Post.objects.count() == 1
