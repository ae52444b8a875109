"""Delivering posts by level: who gets a row in their inbox, and what their feed shows."""

import pytest
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from timelines.home import home_feed
from timelines.home._models import InboxEntry, InboxState
from timelines.home.pull_model import pull_reference_keys
from timelines.models import FanOut

pytestmark = pytest.mark.django_db(transaction=True)

FOLLOWERS = 30


@pytest.fixture
def author_and_followers(settings):
    settings.FEED_FANOUT_CHUNK = 10
    now = timezone.now()
    author = UserFactory(username="author", last_active_at=now)
    people = [UserFactory(username=f"p{n}", last_active_at=now) for n in range(2 * FOLLOWERS)]
    # Every other person follows; the rest, in between (inside every chunk's id
    # range), have kept inboxes too and must get nothing.
    followers = people[::2]
    for person in people:
        InboxState.objects.create(reader_id=person.pk, built_at=now)
    for follower in followers:
        follow(follower=follower, followee=author)
    return author, followers


def rows_of(post: Post) -> set[int]:
    """The readers other than the author with the post in their inbox."""
    readers = InboxEntry.objects.filter(timeline_key=post.timeline_key).exclude(
        reader_id=post.author_id
    )
    return set(readers.values_list("reader_id", flat=True))


def test_a_followers_only_post_goes_to_every_follower_at_the_cost_of_a_public_one(
    author_and_followers,
):
    author, followers = author_and_followers
    public = create_post(author=author, text="for everyone")
    private = create_post(author=author, text="for followers", visibility="followers")

    assert rows_of(private) == rows_of(public) == {f.pk for f in followers}
    assert FanOut.objects.get(pk=private.pk).chunks_total == 3
    assert FanOut.objects.get(pk=public.pk).chunks_total == 3


def test_a_direct_post_to_three_people_writes_three_inbox_rows_not_a_fan_out(
    author_and_followers,
):
    author, followers = author_and_followers
    to = followers[3], followers[17], followers[29]
    outsider = UserFactory(username="outsider", last_active_at=timezone.now())
    text = " ".join(f"@{user.username}" for user in (*to, outsider)) + " just us"
    InboxState.objects.create(reader_id=outsider.pk, built_at=timezone.now())

    post = create_post(author=author, text=text, visibility="direct")

    assert post.recipient_ids == sorted(user.pk for user in (*to, outsider))
    # Only the addressed followers: one chunk each, no walk of the 30 followers.
    assert rows_of(post) == {user.pk for user in to}
    assert FanOut.objects.get(pk=post.pk).chunks_total == 4
    assert FanOut.objects.get(pk=post.pk).recipients == 3


def test_a_direct_post_shows_in_the_feed_of_the_addressed_followers_only(author_and_followers):
    author, followers = author_and_followers
    addressed, other = followers[0], followers[1]
    post = create_post(author=author, text=f"@{addressed.username} psst", visibility="direct")

    for reader, shown in ((addressed, [post.pk]), (other, []), (author, [post.pk])):
        page = home_feed(reader=reader, cursor=Cursor())
        assert [item.post.pk for item in page.items] == shown
        keys = pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=20)
        assert [item.key for item in page.items] == keys


def test_a_reply_takes_its_parents_level_when_that_is_stricter(author_and_followers):
    author, followers = author_and_followers
    parent = create_post(author=author, text="followers only", visibility="followers")

    reply = create_post(author=followers[0], text="re", in_reply_to=parent, visibility="public")
    stricter = create_post(author=followers[0], text="re", in_reply_to=parent, visibility="direct")

    assert reply.visibility == "followers"
    assert stricter.visibility == "direct"


def test_a_direct_reply_to_a_direct_post_addresses_the_whole_conversation(author_and_followers):
    author, followers = author_and_followers
    first, second = followers[0], followers[1]
    opening = create_post(
        author=author, text=f"@{first.username} @{second.username} hi", visibility="direct"
    )

    answer = create_post(author=first, text="hello both", in_reply_to=opening)

    assert answer.visibility == "direct"
    assert answer.recipient_ids == sorted([author.pk, second.pk])
