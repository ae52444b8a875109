"""Two-ended cursors: ``?after=A&before=B`` lists what lies between, newest first.

The gap-filling range Mastodon clients ask for, on every list that pages by a key.
"""

import re

import pytest

from posts.services import create_post
from relations.models import Follower
from relations.services import follow
from tests.factories import UserFactory
from timelines.notifications.models import Notification
from timelines.notifications.services import notify

pytestmark = pytest.mark.django_db


def post_ids(response) -> list[str]:
    assert response.status_code == 200
    return re.findall(r'data-post-id="([0-9A-Z]{16})"', response.content.decode())


def test_home_feed_lists_the_posts_between_two_keys(alice_client, alice):
    posts = [create_post(author=alice, text=f"post {n}") for n in range(6)]
    keys = [post.timeline_key for post in posts]

    response = alice_client.get("/", {"after": keys[1], "before": keys[5]})

    assert post_ids(response) == [posts[4].pk, posts[3].pk, posts[2].pk]


def test_profile_lists_the_posts_between_two_ids(client, alice):
    posts = [create_post(author=alice, text=f"post {n}") for n in range(6)]

    response = client.get("/@alice/", {"after": posts[0].pk, "before": posts[3].pk})

    assert post_ids(response) == [posts[2].pk, posts[1].pk]


def test_replies_list_the_replies_between_two_keys(client, alice):
    parent = create_post(author=alice, text="parent")
    replies = [create_post(author=alice, text=f"re {n}", in_reply_to=parent) for n in range(4)]

    response = client.get(
        f"/posts/{parent.pk}/",
        {"after": replies[0].timeline_key, "before": replies[3].timeline_key},
    )

    assert post_ids(response) == [parent.pk, replies[2].pk, replies[1].pk]


def test_notifications_list_the_rows_between_two_ids(alice_client, alice):
    for n in range(5):
        notify(recipient_id=alice.pk, kind="follow", actor_id=UserFactory(username=f"f{n}").pk)
    ids = list(Notification.objects.order_by("id").values_list("id", flat=True))

    response = alice_client.get("/notifications/", {"after": ids[0], "before": ids[4]})

    shown = re.findall(r'data-notification-id="(\d+)"', response.content.decode())
    assert shown == [str(ids[3]), str(ids[2]), str(ids[1])]


def test_follower_list_lists_the_follows_between_two_cursors(client, alice):
    fans = [UserFactory(username=f"fan{n}") for n in range(4)]
    for fan in fans:
        follow(follower=fan, followee=alice)
    first = client.get("/@alice/followers/").content.decode()
    names = re.findall(r'href="/@(fan\d)/"', first)
    assert names == ["fan3", "fan2", "fan1", "fan0"]
    by_id = {fan.pk: fan.username for fan in fans}
    rows = {by_id[row.follower_id]: row for row in Follower.objects.filter(user=alice)}

    def cursor(name: str) -> str:
        micros = int(rows[name].created_at.timestamp() * 1_000_000)
        return f"{micros}_{rows[name].follower_id}"

    response = client.get("/@alice/followers/", {"after": cursor("fan0"), "before": cursor("fan3")})

    assert re.findall(r'href="/@(fan\d)/"', response.content.decode()) == ["fan2", "fan1"]
