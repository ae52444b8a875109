"""What a reader sees, rule by rule: each through the engine and the reference alike."""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post, delete_post, repost, undo_repost
from relations.services import BlockedError, block, follow, mute, unmute
from tests.factories import UserFactory
from tests.timelines.test_pull_merged import STALLED_PULL
from timelines.home import PULL_FAILED_NOTICE, home_feed
from timelines.home import _pull as pull
from timelines.home import _state as opening
from timelines.home._page import WINDOW_FACTOR
from timelines.home.pull_model import pull_reference_keys

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(
    autouse=True,
    params=[(None, 5, 100), (None, 5, 0), (None, 0, 0), (True, 5, 0)],
    ids=["entries-as-found", "entries-one-statement", "entries-reposts-probed", "entries-routed"],
)
def entries_form(request, settings):
    """Every rule in each form of the entries step (timelines.home._items): the one this
    database takes (on PostgreSQL, from what the process holds: timelines.home._held_posts), the
    one statement, with reposts scanned or (as for a viral post) probed per person
    followed, and the routed one."""
    (
        settings.FEED_ROUTED_READS,
        settings.FEED_REPOSTS_SCANNED_PER_FOLLOWEE,
        settings.FEED_HELD_POSTS,
    ) = request.param


def feed(reader) -> list[tuple[str, list[str]]]:
    """(original post id, reposters) of page one, checked against the reference."""
    page = home_feed(reader=reader, cursor=Cursor(), limit=50)
    keys = [item.key for item in page.items]
    assert keys == pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=50)
    return [(item.post.pk, [u.username for u in item.reposted_by]) for item in page.items]


@pytest.fixture
def world(db):
    reader, friend, author, other = (
        UserFactory(username=name, last_active_at=timezone.now())
        for name in ("reader", "friend", "author", "other")
    )
    home_feed(reader=reader, cursor=Cursor())  # the reader's inbox is kept from now on
    follow(follower=reader, followee=friend)
    follow(follower=reader, followee=author)
    return reader, friend, author, other


def test_a_repost_by_someone_you_follow_shows_the_original_with_who_reposted(world):
    reader, friend, _, other = world
    post = create_post(author=other, text="not followed")

    repost(user=friend, post=post)

    assert feed(reader) == [(post.pk, ["friend"])]


def test_a_post_reposted_by_several_people_shows_once_at_the_newest_repost(world):
    reader, friend, author, other = world
    post = create_post(author=author, text="original")
    create_post(author=other, text="unseen")
    repost(user=friend, post=post)
    later = create_post(author=friend, text="in between")
    repost(user=reader, post=post)

    assert feed(reader) == [(post.pk, ["reader", "friend"]), (later.pk, [])]


def test_reposted_by_names_only_the_reposters_whose_reposts_the_reader_sees(world):
    reader, friend, author, other = world
    post = create_post(author=author, text="original")
    repost(user=friend, post=post)
    repost(user=other, post=post)  # someone the reader does not follow

    assert feed(reader) == [(post.pk, ["friend"])]
    mute(user=reader, target=friend)
    assert feed(reader) == [(post.pk, [])]


def test_undoing_the_newest_repost_moves_the_post_back_to_the_older_one(world):
    reader, friend, author, _ = world
    post = create_post(author=author, text="original")
    repost(user=friend, post=post)
    middle = create_post(author=author, text="middle")
    repost(user=reader, post=post)

    undo_repost(user=reader, post=post)

    assert feed(reader) == [(middle.pk, []), (post.pk, ["friend"])]


def test_deleting_the_original_removes_every_repost_from_the_feed(world):
    reader, friend, author, _ = world
    post = create_post(author=author, text="original")
    repost(user=friend, post=post)

    delete_post(post=post)

    assert feed(reader) == []


def test_reposting_twice_is_one_repost(world):
    _, friend, author, _ = world
    post = create_post(author=author, text="original")

    first, second = repost(user=friend, post=post), repost(user=friend, post=post)

    assert first.pk == second.pk
    post.refresh_from_db()
    assert post.repost_count == 1


def test_muting_removes_posts_and_reposts_at_once_and_unmuting_brings_them_back(world):
    reader, friend, author, other = world
    own = create_post(author=author, text="by author")
    shared = create_post(author=other, text="by other")
    repost(user=author, post=shared)
    by_friend = create_post(author=friend, text="by friend")

    mute(user=reader, target=author)
    after_mute = create_post(author=author, text="while muted")

    assert feed(reader) == [(by_friend.pk, [])]
    unmute(user=reader, target=author)
    assert [pk for pk, _ in feed(reader)] == [after_mute.pk, by_friend.pk, shared.pk, own.pk]


def test_reposts_of_a_muted_accounts_posts_leave_the_feed(world):
    reader, friend, _, other = world
    post = create_post(author=other, text="by other")
    repost(user=friend, post=post)

    mute(user=reader, target=other)

    assert feed(reader) == []


def test_blocking_ends_follows_both_ways_and_hides_reposts_of_their_posts(world):
    reader, friend, author, other = world
    follow(follower=author, followee=reader)
    post = create_post(author=other, text="by other")
    repost(user=friend, post=post)
    create_post(author=author, text="by author")

    block(user=reader, target=author)
    block(user=other, target=reader)

    assert feed(reader) == []
    with pytest.raises(BlockedError):
        follow(follower=author, followee=reader)
    reader.refresh_from_db()
    assert reader.following_count == 1 and reader.followers_count == 0


def test_a_hidden_post_leaves_the_feed_and_comes_back_when_restored(world):
    reader, _, author, _ = world
    post = create_post(author=author, text="reported")

    Post.objects.filter(pk=post.pk).update(hidden_at=timezone.now())
    assert feed(reader) == []
    Post.objects.filter(pk=post.pk).update(hidden_at=None)
    assert feed(reader) == [(post.pk, [])]


def test_a_reply_reaches_the_repliers_followers_and_counts_on_the_parent(world):
    reader, friend, _, other = world
    parent = create_post(author=other, text="parent")

    reply = create_post(author=friend, text="reply", in_reply_to=parent)

    assert feed(reader) == [(reply.pk, [])]
    parent.refresh_from_db()
    assert parent.reply_count == 1
    delete_post(post=reply)
    parent.refresh_from_db()
    assert parent.reply_count == 0


def test_a_pull_of_big_accounts_that_times_out_still_serves_the_inbox_and_says_so(
    world, settings, monkeypatch
):
    reader, friend, author, other = world
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 2
    settings.FEED_PULL_TIMEOUT_MS = 50
    follow(follower=other, followee=author)  # author's second follower: a big account now
    create_post(author=author, text="pulled at read time")
    # Enough pushed posts that the page's window of keys lies in the inbox.
    pushed = [create_post(author=friend, text=f"pushed {n}") for n in range(8)]
    newer = pushed[-1]

    # The pull's statement stalls, to be cancelled by the real statement timeout.
    monkeypatch.setattr(pull, "_NEAREST", STALLED_PULL)
    started = time.monotonic()
    page = home_feed(reader=reader, cursor=Cursor(), limit=1)

    assert time.monotonic() - started < 2
    assert [item.post.pk for item in page.items] == [newer.pk]
    assert page.older == newer.timeline_key  # more below: the rel="next" cursor
    assert page.notices == [PULL_FAILED_NOTICE]


def test_a_page_merges_in_the_big_accounts_its_reader_follows_or_is_and_no_other(world, settings):
    reader, friend, author, other = world
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 1  # one follower makes a big account
    stranger = UserFactory(username="stranger")
    follow(follower=other, followee=reader)
    follow(follower=other, followee=stranger)
    for person in (reader, friend, author, stranger):
        create_post(author=person, text=f"pulled, by {person.username}")

    opened = opening.open_built(reader.pk, following=2)

    assert sorted(opened.pulled) == sorted([reader.pk, friend.pk, author.pk])
    assert [post_id for post_id, _ in feed(reader)] == [
        post.pk
        for post in Post.objects.filter(author__in=[reader, friend, author]).order_by(
            "-timeline_key"
        )
    ]


def test_a_page_of_collapsed_reposts_costs_the_same_queries_as_any_other(world):
    reader, friend, author, _ = world

    def queries_for_first_page() -> int:
        home_feed(reader=reader, cursor=Cursor(), limit=20)  # fills the cache
        with CaptureQueriesContext(connection) as queries:
            page = home_feed(reader=reader, cursor=Cursor(), limit=20)
        assert page.items
        return len(queries)

    # More posts than a window of keys holds, one of them reposted: the first window
    # is full and shows a page, as it does after the reposts below.
    window = WINDOW_FACTOR * 21
    before = [create_post(author=author, text=f"before {n}") for n in range(window + 1)]
    repost(user=friend, post=before[0])
    baseline = queries_for_first_page()
    # 20 more posts, each also reposted: 20 entries of the window collapse away.
    for n in range(20):
        repost(user=friend, post=create_post(author=author, text=f"many {n}"))

    assert queries_for_first_page() == baseline
