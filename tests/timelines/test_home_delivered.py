"""``timelines.home.delivered``: the hook live delivery attaches to, sent when a new post
reaches inboxes (a fan-out chunk's readers, the author's own), and only then."""

import pytest

from accounts.services import refresh_last_active
from feed_project.pagination import Cursor
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from timelines import home


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a block's on-commit callbacks (its queued tasks, eagerly), as a commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def heard():
    """What ``delivered`` was sent with: (sorted reader ids, timeline key, author id)."""
    calls = []

    def receiver(sender, reader_ids, timeline_key, author_id, **kwargs):
        calls.append((sorted(reader_ids), timeline_key, author_id))

    home.delivered.connect(receiver)
    yield calls
    home.delivered.disconnect(receiver)


@pytest.fixture
def author_and_readers(db, committed):
    """An author with three followers; two of them (and the author) have kept inboxes."""
    author, *readers = [UserFactory() for _ in range(4)]
    for reader in readers:
        with committed():
            follow(follower=reader, followee=author)
    for person in [author, *readers[:2]]:
        with committed():
            refresh_last_active(user=person)
        home.home_feed(reader=person, cursor=Cursor())  # builds the inbox: kept from now on
    return author, readers


def test_a_new_post_announces_the_kept_inboxes_it_reached(author_and_readers, heard, committed):
    author, readers = author_and_readers
    with committed():
        post = create_post(author=author, text="hello")
    post.refresh_from_db()
    assert sorted(heard) == sorted(
        [
            ([author.pk], post.timeline_key, author.pk),  # the author's own inbox
            (sorted(r.pk for r in readers[:2]), post.timeline_key, author.pk),  # the chunk
        ]
    )


def test_a_backfill_brings_old_posts_and_announces_nothing(author_and_readers, heard, committed):
    author, _readers = author_and_readers
    with committed():
        create_post(author=author, text="before the follow")
    newcomer = UserFactory()
    with committed():
        refresh_last_active(user=newcomer)
    home.home_feed(reader=newcomer, cursor=Cursor())
    heard.clear()
    with committed():
        follow(follower=newcomer, followee=author)
    assert [item.post.text for item in home.home_feed(reader=newcomer, cursor=Cursor()).items] == [
        "before the follow"
    ]
    assert heard == []


def test_a_receiver_that_fails_leaves_the_delivery_standing(
    author_and_readers, committed, caplog
):
    author, readers = author_and_readers

    def broken(sender, **kwargs):
        raise RuntimeError("the live delivery is down")

    home.delivered.connect(broken)
    try:
        with committed():
            post = create_post(author=author, text="still delivered")
    finally:
        home.delivered.disconnect(broken)
    feed = home.home_feed(reader=readers[0], cursor=Cursor()).items
    assert [item.post.pk for item in feed] == [post.pk]
    assert "the live delivery is down" in caplog.text
