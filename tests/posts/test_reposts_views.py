"""Repost buttons, how a repost shows in every list, and the pages' fixed query counts."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from feed_project import sharding
from posts.models import Post
from posts.services import create_post, delete_post, like, repost
from relations.services import block, follow
from tests.factories import UserFactory
from timelines.home import _held_posts as held


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def reposted_by(response, post_id: str) -> list[str]:
    """The names in the "Reposted by" line of the article of ``post_id``."""
    html = response.content.decode()
    article = re.search(
        rf'<article class="post" data-post-id="{post_id}"[^>]*>(.*?)</article>', html, re.S
    )
    assert article, post_id
    line = re.search(r'<p class="post-reposted">(.*?)</p>', article.group(1), re.S)
    return re.findall(r"<a [^>]*>([^<]+)</a>", line.group(1)) if line else []


def live_reposts(post: Post) -> list[int]:
    return list(
        Post.objects.filter(repost_of=post, deleted_at__isnull=True).values_list(
            "author_id", flat=True
        )
    )


@pytest.fixture
def carol_post(carol):
    return create_post(author=carol, text="Worth sharing")


@pytest.fixture
def publish(django_capture_on_commit_callbacks):
    def publish(author: User, text: str = "post") -> Post:
        with django_capture_on_commit_callbacks(execute=True):
            return create_post(author=author, text=text)

    return publish


@pytest.mark.embedded
def test_reposting_shows_the_original_on_your_profile_and_your_followers_home(
    client, alice, bob, carol_post, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/posts/{carol_post.pk}/repost/", {"next": "/"})

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert live_reposts(carol_post) == [alice.pk]
    assert Post.objects.get(pk=carol_post.pk).repost_count == 1
    profile = client.get("/@alice/")
    assert post_ids(profile) == [carol_post.pk]
    assert reposted_by(profile, carol_post.pk) == ["Alice"]
    assert f'action="/posts/{carol_post.pk}/unrepost/"' in profile.content.decode()
    client.force_login(bob)  # bob follows alice, not carol
    home = client.get("/")
    assert post_ids(home) == [carol_post.pk]
    assert reposted_by(home, carol_post.pk) == ["Alice"]
    assert f'action="/posts/{carol_post.pk}/repost/"' in home.content.decode()


def test_reposting_your_own_post_twice_is_one_repost(alice_client, alice):
    post = create_post(author=alice, text="mine")

    for _ in range(2):
        assert alice_client.post(f"/posts/{post.pk}/repost/").status_code == 302

    assert live_reposts(post) == [alice.pk]
    assert Post.objects.get(pk=post.pk).repost_count == 1
    assert User.objects.get(pk=alice.pk).posts_count == 2


def test_undoing_a_repost_takes_it_back_and_again_changes_nothing(alice_client, alice, carol_post):
    repost(user=alice, post=carol_post)

    for _ in range(2):
        assert alice_client.post(f"/posts/{carol_post.pk}/unrepost/").status_code == 302

    assert live_reposts(carol_post) == []
    assert Post.objects.get(pk=carol_post.pk).repost_count == 0
    assert post_ids(alice_client.get("/@alice/")) == []


def test_reposting_a_repost_reposts_the_original(alice_client, alice, bob, carol_post):
    shared = repost(user=bob, post=carol_post)

    alice_client.post(f"/posts/{shared.pk}/repost/")

    assert sorted(live_reposts(carol_post)) == sorted([alice.pk, bob.pk])
    assert not Post.objects.filter(repost_of=shared).exists()


def test_reposting_a_deleted_post_is_a_404_and_writes_nothing(alice_client, carol_post):
    delete_post(post=carol_post)

    assert alice_client.post(f"/posts/{carol_post.pk}/repost/").status_code == 404
    assert not Post.objects.filter(repost_of__isnull=False).exists()


def test_reposting_a_post_of_someone_who_blocks_you_is_a_404(alice_client, alice, carol_post):
    block(user=carol_post.author, target=alice)

    assert alice_client.post(f"/posts/{carol_post.pk}/repost/").status_code == 404
    assert not Post.objects.filter(repost_of__isnull=False).exists()


def test_a_repost_whose_original_is_deleted_leaves_the_profile(alice_client, alice, carol_post):
    repost(user=alice, post=carol_post)
    delete_post(post=carol_post)

    assert post_ids(alice_client.get("/@alice/")) == []


def test_a_profile_leaves_out_reposts_of_people_the_viewer_blocks(client, alice, carol, carol_post):
    repost(user=alice, post=carol_post)
    dave = UserFactory(username="dave")
    block(user=dave, target=carol)
    client.force_login(dave)

    assert post_ids(client.get("/@alice/")) == []


def test_home_lists_everyone_you_follow_who_reposted_it(client, alice, bob, carol_post):
    dave = UserFactory(username="dave", display_name="Dave")
    follow(follower=bob, followee=dave)
    repost(user=alice, post=carol_post)
    repost(user=dave, post=carol_post)
    client.force_login(bob)

    home = client.get("/")

    assert post_ids(home) == [carol_post.pk]
    assert reposted_by(home, carol_post.pk) == ["Dave", "Alice"]


def test_every_post_shows_its_reply_like_and_repost_counts(alice_client, alice, bob, carol_post):
    like(user=bob, post=carol_post)
    repost(user=bob, post=carol_post)
    create_post(author=bob, text="reply", in_reply_to=carol_post)

    content = alice_client.get("/@carol/").content.decode()

    for label in ("Reply", "Like", "Repost"):
        assert f'{label}</span> <span class="count">1</span>' in content


def _fill(author: User, reader: User, others: list[User], total: int) -> None:
    """Posts by ``author`` until there are ``total``, every other one a repost, liked by reader."""
    while Post.objects.by_author(author.pk).visible().count() < total:
        n = Post.objects.by_author(author.pk).count()
        if n % 2:
            original = create_post(author=others[n % len(others)], text=f"original {n}")
            repost(user=author, post=original)
            like(user=reader, post=original)
        else:
            like(user=reader, post=create_post(author=author, text=f"post {n}"))


def test_home_query_count_does_not_grow_with_reposts_and_likes(
    client, alice, bob, carol, django_capture_on_commit_callbacks
):
    """Bob's feed: alice's posts and her reposts of carol's, each liked by bob.

    (Reposts of posts by people bob follows collapse into one item; a window
    of keys thinned that way makes the engine read one more window, its
    MAX_WINDOWS loop: that is the feed's cost, not the page's.)
    """
    client.force_login(bob)
    client.get("/")  # the first visit records last-active and builds the inbox
    counts = []
    for total in (2, 20):
        with django_capture_on_commit_callbacks(execute=True):  # fan-out into bob's inbox
            _fill(alice, bob, [carol], total)
        held.clear()  # a process's first page: its posts read (timelines.home._held_posts)
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/")
        assert len(post_ids(response)) == total
        assert response.content.decode().count("Liked</span> <span") == total
        assert response.content.decode().count("Reposted by") == total // 2
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    # On Citus the entries are read in their routed form: up to three statements
    # more, each on its own shard key (timelines.home._items.hydrate); on PostgreSQL a
    # process's first page reads its posts, one more (timelines.home._held_posts).
    assert counts[0] <= (15 if sharding.on_citus(connection) else 13), counts


def test_profile_query_count_does_not_grow_with_reposts_and_likes(client, alice, bob, carol):
    client.force_login(bob)
    client.get("/@alice/")  # the session's first request records last-active
    counts = []
    for total in (2, 20):
        _fill(alice, bob, [carol], total)
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/@alice/")
        assert len(post_ids(response)) == total
        assert response.content.decode().count("Liked</span> <span") == total
        assert response.content.decode().count("Reposted by") == total // 2
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    # Session, viewer, the name's claim, person (accounts.unique_names), where the viewer
    # stands, posts, their originals and the originals' blocks, liked, reposted, images.
    assert counts[0] <= 11
