"""A reader who follows more than FEED_REBUILD_INLINE_FOLLOWING accounts: the first
visit queues the rebuild and reads by pull, page by page, equal to the reference."""

import pytest
from django.core.cache import cache as django_cache
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.services import create_post, repost
from relations.services import follow, mute
from tests.factories import UserFactory
from timelines.home import _state as opening
from timelines.home import home_feed
from timelines.home._models import InboxEntry, InboxState
from timelines.home.pull_model import pull_reference_keys

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def wide(settings):
    """A reader following 6 accounts with 7 posts each, where 3 is the inline limit;
    a repost and a mute give the pull something to drop."""
    settings.FEED_REBUILD_INLINE_FOLLOWING = 3
    settings.FEED_PAGE_SIZE = 5
    reader = UserFactory(username="wide", last_active_at=timezone.now())
    authors = [UserFactory(username=f"a{n}") for n in range(6)]
    for author in authors:
        follow(follower=reader, followee=author)
    for round_ in range(7):
        for author in authors:
            create_post(author=author, text=f"{author.username} {round_}")
    outsider = UserFactory(username="outsider")
    repost(user=authors[0], post=create_post(author=outsider, text="reposted"))
    mute(user=reader, target=authors[5])
    InboxEntry.objects.filter(reader_id=reader.pk).delete()
    InboxState.objects.filter(reader_id=reader.pk).delete()  # never visited
    reader.refresh_from_db()
    return reader


def read(reader, cursor: Cursor):
    page = home_feed(reader=reader, cursor=cursor)
    expected = pull_reference_keys(reader_id=reader.pk, cursor=cursor, limit=5)
    if cursor.newer_pages:
        expected.reverse()
    assert [item.key for item in page.items] == expected
    return page


def pages(reader) -> list[str]:
    """Every page from the top down, then back up: each equal to the reference."""
    keys, cursor = [], Cursor()
    while True:
        page = read(reader, cursor)
        keys += [item.key for item in page.items]
        if page.older is None:
            break
        cursor = Cursor(before=page.older)
    up = [item.key for item in page.items]
    while page.newer is not None:
        page = read(reader, Cursor(after=page.newer))
        up = [item.key for item in page.items] + up
    assert up == keys
    return keys


def test_while_its_rebuild_is_on_its_way_the_feed_is_pulled_page_by_page(wide):
    django_cache.set(opening.REBUILD_QUEUED.format(wide.pk), 1)  # queued by an earlier visit

    keys = pages(wide)

    assert len(keys) == 5 * 7 + 1  # five unmuted authors' posts and the repost
    assert not InboxState.objects.filter(reader_id=wide.pk).exists()  # nothing waited for it


def test_the_first_visit_queues_the_rebuild_once(wide):
    django_cache.delete(opening.REBUILD_QUEUED.format(wide.pk))

    pages(wide)  # in process (eager tasks), the queued rebuild runs at once

    state = InboxState.objects.get(reader_id=wide.pk)
    assert state.built_at is not None
    # Every followee's posts (a mute filters at read) and the repost.
    assert InboxEntry.objects.filter(reader_id=wide.pk).count() == 6 * 7 + 1
    assert pages(wide)  # and now from the inbox, still equal to the reference


def test_a_reader_at_the_limit_waits_for_the_rebuild(wide, settings):
    settings.FEED_REBUILD_INLINE_FOLLOWING = 6
    django_cache.set(opening.REBUILD_QUEUED.format(wide.pk), 1)  # not consulted

    pages(wide)

    assert InboxState.objects.get(reader_id=wide.pk).built_at is not None
