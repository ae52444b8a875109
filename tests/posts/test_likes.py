"""Likes: idempotent, counted on the post row, marked on every list without a query per post."""

import re
import threading
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from posts import selectors
from posts.models import Like, Post
from posts.services import create_post, delete_post, like, repost, unlike
from relations.services import block, follow
from tests.factories import UserFactory


def liked_ids_in(response) -> list[str]:
    """Posts the page marks "liked by you" (their button posts to unlike)."""
    return re.findall(r'action="/posts/([0-9A-Z]+)/unlike/"', response.content.decode())


@pytest.fixture
def carol_post(carol):
    return create_post(author=carol, text="Likeable")


def like_count(post: Post) -> int:
    return Post.objects.get(pk=post.pk).like_count


@pytest.mark.embedded
def test_liking_from_a_page_likes_the_post_and_goes_back_there(alice_client, alice, carol_post):
    response = alice_client.post(
        f"/posts/{carol_post.pk}/like/", {"next": f"/@carol/?before={carol_post.pk}"}
    )

    assert response.status_code == 302
    assert response["Location"] == f"/@carol/?before={carol_post.pk}"
    assert list(Like.objects.values_list("user_id", "post_id")) == [(alice.pk, carol_post.pk)]
    assert like_count(carol_post) == 1
    detail = alice_client.get(f"/posts/{carol_post.pk}/")
    assert liked_ids_in(detail) == [carol_post.pk]
    assert 'Liked</span> <span class="count">1</span>' in detail.content.decode()


def test_liking_twice_is_one_like(alice_client, alice, carol_post):
    for _ in range(2):
        assert alice_client.post(f"/posts/{carol_post.pk}/like/").status_code == 302

    assert Like.objects.count() == 1
    assert like_count(carol_post) == 1


def test_the_services_say_whether_anything_changed(alice, carol_post):
    assert like(user=alice, post=carol_post) is True
    assert like(user=alice, post=carol_post) is False
    assert unlike(user=alice, post=carol_post) is True
    assert unlike(user=alice, post=carol_post) is False
    assert like_count(carol_post) == 0


def test_unliking_takes_the_like_back_and_again_changes_nothing(alice_client, alice, carol_post):
    like(user=alice, post=carol_post)

    for _ in range(2):
        response = alice_client.post(f"/posts/{carol_post.pk}/unlike/")
        assert response.status_code == 302
        assert response["Location"] == f"/posts/{carol_post.pk}/"

    assert not Like.objects.exists()
    assert like_count(carol_post) == 0


def test_liking_a_deleted_post_is_a_404_and_writes_nothing(alice_client, carol_post):
    delete_post(post=carol_post)

    response = alice_client.post(f"/posts/{carol_post.pk}/like/")

    assert response.status_code == 404
    assert not Like.objects.exists()
    assert like_count(carol_post) == 0


def test_liking_a_hidden_post_is_a_404_and_writes_nothing(alice_client, carol_post):
    Post.objects.filter(pk=carol_post.pk).update(hidden_at=timezone.now())

    assert alice_client.post(f"/posts/{carol_post.pk}/like/").status_code == 404
    assert not Like.objects.exists()


@pytest.mark.parametrize("post_id", ["nonsense", "0000000000000000", "ZZZZZZZZZZZZZZZZ"])
def test_liking_a_post_that_does_not_exist_is_a_404(alice_client, post_id):
    assert alice_client.post(f"/posts/{post_id}/like/").status_code == 404
    assert not Like.objects.exists()


def test_liking_a_post_of_someone_who_blocks_you_is_a_404(alice_client, alice, carol_post):
    block(user=carol_post.author, target=alice)

    assert alice_client.post(f"/posts/{carol_post.pk}/like/").status_code == 404
    assert not Like.objects.exists()


def test_liking_a_repost_likes_the_original(alice_client, alice, bob, carol_post):
    shared = repost(user=bob, post=carol_post)

    alice_client.post(f"/posts/{shared.pk}/like/")

    assert list(Like.objects.values_list("post_id", flat=True)) == [carol_post.pk]
    assert like_count(carol_post) == 1


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "home", "a b"])
def test_a_next_that_leaves_the_site_or_is_no_path_goes_back_to_the_post(
    alice_client, carol_post, target
):
    response = alice_client.post(f"/posts/{carol_post.pk}/like/", {"next": target})

    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert (location.scheme, location.netloc) == ("", "")
    assert not response["Location"].startswith(("//", "/\\"))
    if "evil" in target:
        assert response["Location"] == f"/posts/{carol_post.pk}/"


def test_liked_post_ids_is_one_query_for_a_whole_page(alice, carol, django_assert_num_queries):
    posts = [create_post(author=carol, text=f"post {n}") for n in range(20)]
    for post in posts[::2]:
        like(user=alice, post=post)

    with django_assert_num_queries(1):
        liked = selectors.liked_post_ids(alice, [post.pk for post in posts])

    assert liked == {post.pk for post in posts[::2]}


def test_liked_by_you_is_marked_on_home_profile_detail_and_search(
    alice_client, alice, bob, carol, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=alice, followee=carol)
        liked = create_post(author=carol, text="marmalade liked")
        create_post(author=carol, text="marmalade not liked")
    like(user=alice, post=liked)

    for page in ("/", "/@carol/", f"/posts/{liked.pk}/", "/search/?q=marmalade"):
        response = alice_client.get(page)
        assert response.status_code == 200
        assert liked_ids_in(response) == [liked.pk], page


def test_visitors_see_like_counts_but_no_buttons(client, alice, carol_post):
    like(user=alice, post=carol_post)

    content = client.get(f"/posts/{carol_post.pk}/").content.decode()

    assert "/like/" not in content
    assert 'Likes</span> <span class="count">1</span>' in content


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_likes_by_one_person_are_one_like():
    """A double click: two requests at once. One row, a count of 1."""
    author = UserFactory(username="author")
    liker = UserFactory(username="liker")
    post = create_post(author=author, text="popular")
    barrier = threading.Barrier(2)
    results: list[bool] = []
    errors: list[BaseException] = []

    def click() -> None:
        try:
            barrier.wait(timeout=10)
            results.append(like(user=liker, post=post))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert not errors
    assert sorted(results) == [False, True]
    assert Like.objects.filter(post=post).count() == 1
    assert like_count(post) == 1


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_like_requests_through_the_site_are_one_like():
    author = UserFactory(username="author")
    liker = UserFactory(username="liker")
    post = create_post(author=author, text="popular")
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def click() -> None:
        try:
            client = Client()
            client.force_login(liker)
            barrier.wait(timeout=10)
            statuses.append(client.post(f"/posts/{post.pk}/like/").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert statuses == [302, 302]
    assert Like.objects.filter(post=post).count() == 1
    assert like_count(post) == 1
