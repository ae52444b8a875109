"""Mastodon.py against a live server for notifications, grouped notifications,
conversations and markers: the calls a real app makes, parsed as it parses them."""

import pytest
from mastodon.errors import MastodonNotFoundError

from accounts.models import User
from posts.services import create_post, like
from relations.services import follow
from tests.factories import UserFactory
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(db):
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    carol = UserFactory(username="carol")
    follow(follower=bob, followee=alice)
    post = create_post(author=alice, text="alice's post")
    like(user=carol, post=post)
    like(user=bob, post=post)
    create_post(author=carol, text="hey @alice")
    return alice, bob, carol


def test_a_mastodon_client_reads_its_notifications_messages_and_markers(
    live_server, sign_in, people
):
    alice, bob, carol = people
    client = sign_in("alice")

    notes = client.notifications()
    assert [n.type for n in notes] == ["mention", "favourite", "favourite", "follow"]
    assert notes[0].status.account.acct == "carol"
    assert notes[3].account.id == str(bob.pk) and notes[3].status is None
    mentions = client.notifications(types=["mention"])
    assert [n.id for n in mentions] == [notes[0].id]
    assert [n.type for n in client.notifications(exclude_types=["favourite", "mention"])] == [
        "follow"
    ]
    assert client.notifications(id=notes[1].id).id == notes[1].id

    # Paging as an app pages: two at a time, by the Link header.
    first = client.notifications(limit=2)
    second = client.fetch_next(first)
    assert [n.id for n in first + second] == [n.id for n in notes]

    # Grouped (Mastodon 4.3): the two likes are one group.
    grouped = client.grouped_notifications()
    groups = grouped.notification_groups
    assert [g.type for g in groups] == ["mention", "favourite", "follow"]
    assert groups[1].notifications_count == 2
    assert set(groups[1].sample_account_ids) == {str(bob.pk), str(carol.pk)}
    assert {a.id for a in grouped.accounts} == {str(bob.pk), str(carol.pk)}
    one = client.grouped_notification(groups[1].group_key)
    assert one.notification_groups[0].notifications_count == 2
    assert client.unread_grouped_notifications_count() == 3

    assert client.notifications_unread_count().count == 4
    client.notifications_dismiss(notes[0].id)
    with pytest.raises(MastodonNotFoundError):
        client.notifications(id=notes[0].id)
    assert client.notifications_unread_count().count == 3
    assert User.objects.get(pk=alice.pk).unread_notifications == 3

    # Markers: the notifications one marks the site's notifications read.
    status = client.status_post("a post to mark")
    markers = client.markers_set(["home", "notifications"], [status.id, notes[2].id])
    assert markers.home.last_read_id == str(status.id)
    assert markers.notifications.version == 1
    read = client.markers_get(["home", "notifications"])
    assert read.notifications.last_read_id == str(notes[2].id)
    assert read.home.version == 1
    assert client.markers_set("home", status.id).home.version == 2
    assert client.notifications_unread_count().count == 1

    client.notifications_clear()
    assert client.notifications() == []
    assert not Notification.objects.filter(recipient_id=alice.pk).exists()

    # Private messages.
    carols = sign_in("carol")
    sent = carols.status_post("@alice just between us", visibility="direct")
    conversations = client.conversations()
    assert len(conversations) == 1
    talk = conversations[0]
    assert talk.unread is True and talk.last_status.id == sent.id
    assert [a.acct for a in talk.accounts] == ["carol"]
    assert client.conversations_read(talk.id).unread is False
    assert User.objects.get(pk=alice.pk).unread_conversations == 0
    assert carols.conversations()[0].id == talk.id
