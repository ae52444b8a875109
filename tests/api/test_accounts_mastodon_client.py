"""Mastodon.py against a live server for accounts and relationships: the calls a real
app makes to follow, block, mute, handle follow requests, page people, find them,
edit its profile and read suggestions, each parsed as the client parses them."""

import pytest
from mastodon.errors import MastodonNotFoundError

from accounts.models import User
from relations.models import Block, Followee, Mute
from tests import images
from tests.factories import UserFactory
from timelines.suggestions.ranking import refresh

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_mastodon_client_follows_blocks_mutes_and_finds_people(live_server, sign_in, media_root):
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    fans = [UserFactory(username=f"fan{n}") for n in range(3)]
    base = live_server.url
    client = sign_in("alice")
    bobs = sign_in("bob")

    # Follow with the options, unfollow; each answer a Relationship.
    followed = client.account_follow(bob.pk, reblogs=False, notify=True)
    assert followed.following and not followed.showing_reblogs and followed.notifying
    assert Followee.objects.get(user_id=alice.pk, followee_id=bob.pk).hide_reposts
    assert not client.account_unfollow(bob.pk).following

    # A locked account: the follow is a request, which its owner authorizes.
    locked = bobs.account_update_credentials(
        display_name="Bob B.",
        note="Approves followers",
        locked=True,
        avatar=images.image_bytes("PNG", (64, 64)),
        avatar_mime_type="image/png",
    )
    assert locked.locked and locked.display_name == "Bob B."
    assert locked.source.note == "Approves followers"
    assert User.objects.get(pk=bob.pk).avatar
    asked = client.account_follow(bob.pk)
    assert asked.requested and not asked.following
    waiting = bobs.follow_requests()
    assert [str(account.id) for account in waiting] == [str(alice.pk)]
    assert bobs.follow_request_authorize(alice.pk).followed_by
    (seen,) = client.account_relationships([bob.pk])
    assert seen.following and not seen.requested

    # Followers and following, paged through the Link header.
    for fan in fans:
        sign_in(fan.username).account_follow(alice.pk)
    page = client.account_followers(alice.pk, limit=2)
    pages = []
    while page:
        pages.append([account.username for account in page])
        page = client.fetch_next(page)
    assert pages == [["fan2", "fan1"], ["fan0"]]
    assert [a.username for a in client.account_following(alice.pk)] == ["bob"]

    # Finding people.
    assert str(client.account_lookup("bob").id) == str(bob.pk)
    assert str(client.account_lookup(f"@bob@{base.split('//')[1]}").id) == str(bob.pk)
    with pytest.raises(MastodonNotFoundError):
        client.account_lookup("nobody")
    assert [a.username for a in client.account_search("fan", limit=2)] == ["fan0", "fan1"]

    # Block and mute, their lists, and undoing both.
    blocked = client.account_block(fans[0].pk)
    assert blocked.blocking and not blocked.followed_by
    assert [a.username for a in client.blocks()] == ["fan0"]
    assert not client.account_unblock(fans[0].pk).blocking
    assert not Block.objects.exists()
    assert client.account_mute(fans[1].pk, notifications=False).muting
    assert [a.username for a in client.mutes()] == ["fan1"]
    assert not client.account_unmute(fans[1].pk).muting
    assert not Mute.objects.exists()

    # Who to follow: the site's suggestions, as accounts.
    refresh(alice.pk)
    suggested = client.suggestions()
    assert suggested and {a.username for a in suggested} <= {"fan0", "fan1", "fan2"}
    client.suggestion_delete(suggested[0].id)
    assert suggested[0].username not in [a.username for a in client.suggestions()]
