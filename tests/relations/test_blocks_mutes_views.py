"""Block and mute buttons on profiles, and what a blocked profile shows."""

import re

import pytest

from accounts.models import User
from posts.services import create_post
from relations.models import Block, Followee, Follower, Mute
from relations.services import block, follow


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


@pytest.mark.embedded
def test_blocking_from_the_profile_blocks_and_ends_follows_both_ways(
    client, alice, bob, django_capture_on_commit_callbacks
):
    follow(follower=alice, followee=bob)
    client.force_login(alice)
    assert 'action="/@bob/block/"' in client.get("/@bob/").content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/@bob/block/", follow=True)

    assert response.redirect_chain == [("/@bob/", 302)]
    assert "You blocked @bob. Neither of you follows the other now." in messages_of(response)
    assert Block.objects.filter(user=alice, blocked=bob).exists()
    assert not Follower.objects.exists() and not Followee.objects.exists()
    alice.refresh_from_db()
    assert (alice.followers_count, alice.following_count) == (0, 0)
    content = response.content.decode()
    assert 'action="/@bob/unblock/"' in content
    assert "You block @bob" in content


def test_blocking_yourself_is_a_clear_message_and_writes_nothing(alice_client):
    response = alice_client.post("/@alice/block/", follow=True)

    assert response.status_code == 200
    assert "You cannot block yourself." in messages_of(response)
    assert not Block.objects.exists()


def test_muting_yourself_is_a_clear_message_and_writes_nothing(alice_client):
    response = alice_client.post("/@ALICE/mute/", follow=True)

    assert response.status_code == 200
    assert "You cannot mute yourself." in messages_of(response)
    assert not Mute.objects.exists()


def test_blocking_twice_and_unblocking_twice_are_harmless(alice_client, alice, carol):
    assert alice_client.post("/@carol/block/").status_code == 302
    second = alice_client.post("/@carol/block/", follow=True)
    assert "You already block @carol." in messages_of(second)
    assert Block.objects.count() == 1

    first = alice_client.post("/@carol/unblock/", follow=True)
    assert "You unblocked @carol." in messages_of(first)
    again = alice_client.post("/@carol/unblock/", follow=True)
    assert "You did not block @carol." in messages_of(again)
    assert not Block.objects.exists()


def test_muting_and_unmuting_from_the_profile(alice_client, alice, carol):
    response = alice_client.post("/@carol/mute/", follow=True)
    assert "You muted @carol: their posts leave your feed." in messages_of(response)
    assert Mute.objects.filter(user=alice, muted=carol).exists()
    assert 'action="/@carol/unmute/"' in response.content.decode()
    again = alice_client.post("/@carol/mute/", follow=True)
    assert "You already mute @carol." in messages_of(again)

    response = alice_client.post("/@carol/unmute/", follow=True)
    assert "You unmuted @carol." in messages_of(response)
    assert not Mute.objects.exists()
    assert 'action="/@carol/mute/"' in response.content.decode()


def test_a_mute_changes_nothing_but_the_feed(alice_client, alice, bob):
    """Bob follows alice; alice mutes bob: the follow stays, his profile still shows."""
    post = create_post(author=bob, text="still here")

    alice_client.post("/@bob/mute/")

    assert Follower.objects.filter(user=alice, follower=bob).exists()
    assert post_ids(alice_client.get("/@bob/")) == [post.pk]


@pytest.mark.parametrize("action", ["block", "unblock", "mute", "unmute"])
def test_acting_on_someone_who_does_not_exist_is_a_404(alice_client, action):
    assert alice_client.post(f"/@nobody/{action}/").status_code == 404


def test_a_next_field_sends_you_back_where_you_were(alice_client, carol):
    response = alice_client.post("/@carol/mute/", {"next": "/search/?q=carol"})

    assert response["Location"] == "/search/?q=carol"


@pytest.mark.parametrize("next_url", ["home", "a b", "https://evil.example/"])
def test_a_next_field_that_is_not_a_path_here_is_not_a_500(alice_client, carol, next_url):
    response = alice_client.post("/@carol/mute/", {"next": next_url})

    assert response.status_code == 302
    assert "evil" not in response["Location"]


def test_following_someone_who_blocks_you_is_a_clear_message(alice_client, alice, carol):
    block(user=carol, target=alice)

    response = alice_client.post("/@carol/follow/", follow=True)

    assert response.status_code == 200
    assert "You cannot follow @carol: one of you blocks the other." in messages_of(response)
    assert not Followee.objects.filter(user=alice).exists()
    assert User.objects.get(pk=alice.pk).following_count == 0


def test_following_someone_you_block_is_a_clear_message(alice_client, alice, carol):
    block(user=alice, target=carol)

    response = alice_client.post("/@carol/follow/", follow=True)

    assert "You cannot follow @carol: one of you blocks the other." in messages_of(response)
    assert not Followee.objects.exists()


def test_the_profile_of_someone_who_blocks_you_shows_no_posts_and_a_note(
    alice_client, alice, carol
):
    create_post(author=carol, text="not for alice")
    block(user=carol, target=alice)

    response = alice_client.get("/@carol/")

    assert response.status_code == 200
    assert post_ids(response) == []
    content = response.content.decode()
    assert "@carol blocks you" in content
    assert 'action="/@carol/follow/"' not in content


def test_the_profile_of_someone_you_block_shows_no_posts_and_a_note(alice_client, alice, carol):
    create_post(author=carol, text="not for alice")
    block(user=alice, target=carol)

    response = alice_client.get("/@carol/")

    assert post_ids(response) == []
    assert "You block @carol" in response.content.decode()


def test_others_still_see_the_profile_of_someone_who_blocks_alice(client, alice, carol):
    post = create_post(author=carol, text="public")
    block(user=carol, target=alice)

    assert post_ids(client.get("/@carol/")) == [post.pk]


def test_blocking_takes_their_posts_out_of_your_home_feed_at_once(
    client, alice, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        create_post(author=alice, text="alice's post")
    client.force_login(bob)
    assert len(post_ids(client.get("/"))) == 1

    client.post("/@alice/block/")  # no on-commit clean-up run: the read filters it

    assert post_ids(client.get("/")) == []


def test_visitors_see_no_block_or_mute_buttons(client, alice):
    content = client.get("/@alice/").content.decode()

    assert "/block/" not in content and "/mute/" not in content
