"""A reply that names its parent's author (every Mastodon app writes the @name in)
tells that author once: the site's reply notification, Mastodon's one "mention",
not a second notification for the @name. Others named in it are told of the
mention."""

import pytest

from feed_project.pagination import Cursor
from posts import ids
from posts.services import create_post
from tests.factories import UserFactory
from timelines.notifications.models import Notification
from timelines.notifications.selectors import notifications_page

pytestmark = pytest.mark.django_db


def test_a_reply_naming_its_parents_author_tells_them_once(
    client, make_token, django_capture_on_commit_callbacks
):
    bob = UserFactory(username="bob")
    carol = UserFactory(username="carol")
    alice = UserFactory(username="alice")
    parent = create_post(author=bob, text="what do you think?")

    with django_capture_on_commit_callbacks(execute=True):  # the notifying task, in process
        reply = create_post(author=alice, text="@bob @carol I agree", in_reply_to=parent)

    Kind = Notification.Kind
    bobs = notifications_page(user=bob, cursor=Cursor()).items
    assert [(note.kind, note.post_id) for note in bobs] == [(Kind.REPLY, reply.pk)]
    carols = notifications_page(user=carol, cursor=Cursor()).items
    assert [(note.kind, note.post_id) for note in carols] == [(Kind.MENTION, reply.pk)]
    answer = client.get(
        "/api/v1/notifications", HTTP_AUTHORIZATION=f"Bearer {make_token(bob)}"
    ).json()
    assert [(note["type"], note["status"]["id"]) for note in answer] == [
        ("mention", ids.decimal_of_key(reply.timeline_key))
    ]
