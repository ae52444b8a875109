""" "Replying to @name" on every reply in every list, without a query a post; a parent the
reader may not see says so without its author's name (posts.selectors.reply_names)."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from posts.models import Post
from posts.services import create_post, delete_post
from posts.tags import compute_trending
from relations.services import block, follow
from tests.factories import UserFactory
from timelines.home import _held_posts as held


def reply_line(html: str, post_id: str) -> str:
    """The "replying to" paragraph of the article of ``post_id``."""
    article = re.search(rf'<article[^>]*data-post-id="{post_id}".*?</article>', html, re.DOTALL)
    assert article, f"no article {post_id}"
    line = re.search(r'<p class="post-reply-to">(.*?)</p>', article.group(0), re.DOTALL)
    assert line, f"article {post_id} says nothing of what it replies to"
    return line.group(1)


@pytest.fixture
def dave(db):
    """Dave follows no one yet; the tests make him follow Bob only."""
    return UserFactory(username="dave", display_name="Dave")


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    def run():
        return django_capture_on_commit_callbacks(execute=True)

    return run


def test_a_reply_names_the_parents_author_in_every_list(client, alice, bob, dave, on_commit):
    with on_commit():
        follow(follower=dave, followee=bob)
        parent = create_post(author=alice, text="the parent")
        reply = create_post(author=bob, text="a reply about #replies", in_reply_to=parent)
    compute_trending()
    client.force_login(dave)
    expected = f'<a href="/posts/{parent.pk}/">Replying to @alice</a>'
    for url in ("/", "/@bob/", f"/posts/{reply.pk}/", "/public/", "/search/?q=reply"):
        html = client.get(url).content.decode()
        assert reply_line(html, reply.pk) == expected, url
    html = client.get("/tags/replies/").content.decode()
    assert reply_line(html, reply.pk) == expected
    client.logout()
    for url in ("/@bob/", "/public/"):  # signed out too
        assert reply_line(client.get(url).content.decode(), reply.pk) == expected


@pytest.mark.parametrize("why", ["deleted", "blocks the reader", "followers only"])
def test_a_parent_the_reader_may_not_see_is_not_named(client, alice, bob, dave, on_commit, why):
    with on_commit():
        follow(follower=dave, followee=bob)
        level = "followers" if why == "followers only" else "public"
        parent = create_post(author=alice, text="the parent", visibility=level)
        # Bob follows Alice, so he may reply to her followers-only post.
        reply = create_post(author=bob, text="a reply", in_reply_to=parent)
        if why == "deleted":
            delete_post(post=parent)
        elif why == "blocks the reader":
            block(user=alice, target=dave)
    client.force_login(dave)
    for url in ("/", "/@bob/", f"/posts/{reply.pk}/"):
        line = reply_line(client.get(url).content.decode(), reply.pk)
        assert line == "Replying to a post you cannot see", (url, line)
    # Bob may still see it (unless it is gone): he reads the name.
    client.force_login(bob)
    line = reply_line(client.get("/@bob/").content.decode(), reply.pk)
    assert ("Replying to @alice" in line) == (why != "deleted"), line


def test_replies_to_many_authors_cost_one_query_more_than_none(client, dave, on_commit):
    """The parents' authors come in one query per page, whatever the page holds."""
    bob = UserFactory(username="bob", display_name="Bob")
    with on_commit():
        follow(follower=dave, followee=bob)
        create_post(author=bob, text="no reply")
    client.force_login(dave)
    client.get("/")  # the first visit records last-active and builds the inbox
    counts = {}
    for replies in (0, 1, 8):
        while Post.objects.filter(author=bob, in_reply_to__isnull=False).count() < replies:
            with on_commit():
                parent = create_post(author=UserFactory(), text="elsewhere")
                create_post(author=bob, text="answer", in_reply_to=parent)
        for url in ("/", "/@bob/", "/public/"):
            held.clear()  # a process's first page: every post read (timelines.home._held_posts)
            with CaptureQueriesContext(connection) as queries:
                html = client.get(url).content.decode()
            assert html.count("Replying to @user") == replies, url
            counts[(url, replies)] = len(queries)
    for url in ("/", "/@bob/", "/public/"):
        assert counts[(url, 1)] == counts[(url, 8)], counts
    # The parents are not on the home page nor on Bob's: one query more, once.
    for url in ("/", "/@bob/"):
        assert counts[(url, 1)] == counts[(url, 0)] + 1, counts
    # On the public timeline they are (everyone's posts): nothing more.
    assert counts[("/public/", 1)] == counts[("/public/", 0)], counts
