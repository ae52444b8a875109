"""Per-follow options: hide someone's reposts; be notified when they post."""

import pytest
from django.test import Client
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.services import create_post, repost
from relations.models import Followee, Follower
from relations.services import follow, set_follow_options
from tests.factories import UserFactory
from timelines.home import home_feed
from timelines.home.pull_model import pull_reference_keys
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(db):
    now = timezone.now()
    reader, friend, other = (
        UserFactory(username=name, last_active_at=now) for name in ("reader", "friend", "other")
    )
    home_feed(reader=reader, cursor=Cursor())
    follow(follower=reader, followee=friend)
    return reader, friend, other


def feed(reader) -> list[tuple[str, list[str]]]:
    page = home_feed(reader=reader, cursor=Cursor())
    keys = pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=20)
    assert [item.key for item in page.items] == keys
    return [(item.post.pk, [u.username for u in item.reposted_by]) for item in page.items]


def test_hiding_reposts_keeps_their_own_posts_and_drops_their_reposts(world):
    reader, friend, other = world
    shared = create_post(author=other, text="shared")
    repost(user=friend, post=shared)
    own = create_post(author=friend, text="own words")
    client = Client()
    client.force_login(reader)
    assert feed(reader) == [(own.pk, []), (shared.pk, ["friend"])]

    response = client.post("/@friend/follow-options/", {"hide_reposts": "on"})

    assert response.status_code == 302
    assert feed(reader) == [(own.pk, [])]
    client.post("/@friend/follow-options/", {})
    assert feed(reader) == [(own.pk, []), (shared.pk, ["friend"])]


def test_notify_me_when_they_post_notifies_of_posts_the_reader_may_see(world):
    reader, friend, _ = world
    client = Client()
    client.force_login(reader)
    client.post("/@friend/follow-options/", {"notify_posts": "on"})
    assert Follower.objects.get(user=friend, follower=reader).notify_posts
    assert Followee.objects.get(user=reader, followee=friend).notify_posts

    post = create_post(author=friend, text="news")
    create_post(author=friend, text="@other only", visibility="direct")

    notes = Notification.objects.filter(recipient=reader, kind="post")
    assert list(notes.values_list("post_id", flat=True)) == [post.pk]
    html = client.get("/@friend/").content.decode()
    assert 'name="notify_posts" checked' in html


def test_options_of_a_follow_that_does_not_exist_change_nothing(world):
    reader, _, other = world
    client = Client()
    client.force_login(reader)
    client.post("/@other/follow-options/", {"hide_reposts": "on"})
    assert not Followee.objects.filter(user=reader, followee=other).exists()


@pytest.mark.parametrize("hide_reposts, notify_posts", [(True, False), (False, True)])
def test_the_profile_shows_each_option_as_it_stands(world, hide_reposts, notify_posts):
    reader, friend, _ = world
    set_follow_options(
        follower=reader, followee=friend, hide_reposts=hide_reposts, notify_posts=notify_posts
    )
    client = Client()
    client.force_login(reader)

    page = client.get("/@friend/").content.decode()

    assert ('name="hide_reposts" checked' in page) is hide_reposts
    assert ('name="notify_posts" checked' in page) is notify_posts
