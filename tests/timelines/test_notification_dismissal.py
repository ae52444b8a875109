"""The notifications and messages services the client API added: dismissing one or a
few, clearing all, reading up to a point, muted people, and hiding a conversation;
each keeps the site's unread counters right."""

import pytest

from accounts.models import User
from feed_project.pagination import Cursor
from feed_project.refusals import NotFound
from posts.services import create_post, delete_post
from relations.services import mute
from tests.factories import UserFactory
from timelines.conversations import services as conversations
from timelines.conversations.selectors import conversations_page
from timelines.models import Conversation, ConversationMessage, Notification
from timelines.notifications import selectors
from timelines.notifications import services as notifications

pytestmark = pytest.mark.django_db

Kind = Notification.Kind


def unread(user: User) -> int:
    return User.objects.get(pk=user.pk).unread_notifications


@pytest.fixture
def fans(alice):
    """Three people followed Alice: three unread notifications, oldest first."""
    people = [UserFactory(username=f"fan{n}") for n in range(3)]
    for person in people:
        notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=person.pk)
    return people


def ids_of(user: User) -> list[int]:
    return list(
        Notification.objects.filter(recipient_id=user.pk)
        .order_by("id")
        .values_list("pk", flat=True)
    )


def test_dismiss_deletes_and_takes_the_unread_off_the_counter(alice, fans, carol):
    first, second, third = ids_of(alice)
    notifications.mark_read_up_to(user=alice, notification_id=first)
    assert unread(alice) == 2
    assert notifications.dismiss(user=alice, notification_ids=[first, second]) == 2
    assert ids_of(alice) == [third] and unread(alice) == 1
    with pytest.raises(NotFound):
        notifications.dismiss(user=alice, notification_ids=[first])
    with pytest.raises(NotFound):  # not Carol's
        notifications.dismiss(user=carol, notification_ids=[third])
    assert ids_of(alice) == [third]


def test_clear_all_and_read_up_to(alice, fans):
    first, second, _ = ids_of(alice)
    assert notifications.mark_read_up_to(user=alice, notification_id=second) == 2
    assert notifications.mark_read_up_to(user=alice, notification_id=first) == 0
    assert unread(alice) == 1
    assert notifications.clear_all(user=alice) == 3
    assert ids_of(alice) == [] and unread(alice) == 0


def test_a_muted_person_notifies_no_more_and_what_came_before_is_hidden(alice, fans):
    muted = fans[0]
    mute(user=alice, target=muted)
    assert not notifications.notify(
        recipient_id=alice.pk, kind=Kind.MENTION, actor_id=muted.pk, post_id=None
    )
    page = selectors.notifications_page(user=alice, cursor=Cursor())
    assert [note.actor_id for note in page.items] == [fans[2].pk, fans[1].pk]
    assert len(selectors.unread(user=alice)) == 2


def test_a_deleted_post_shows_as_gone(alice, carol):
    post = create_post(author=alice, text="soon gone")
    notifications.notify(recipient_id=alice.pk, kind=Kind.LIKE, actor_id=carol.pk, post_id=post.pk)
    delete_post(post=post)
    (note,) = selectors.notifications_page(user=alice, cursor=Cursor()).items
    assert note.post is None


def test_hiding_a_conversation_is_one_persons(alice, carol, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        create_post(author=alice, text="@carol psst", visibility="direct")
    key = conversations.key_of([alice.pk, carol.pk])
    assert User.objects.get(pk=carol.pk).unread_conversations == 1
    conversations.hide(user=carol, key=key)
    assert conversations_page(user=carol, cursor=Cursor()).items == []
    assert User.objects.get(pk=carol.pk).unread_conversations == 0
    assert not ConversationMessage.objects.filter(user_id=carol.pk).exists()
    assert Conversation.objects.filter(user_id=alice.pk, key=key).exists()
    with pytest.raises(NotFound):
        conversations.hide(user=carol, key=key)
