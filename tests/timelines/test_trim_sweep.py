"""No write trims the inbox table: a sweep trims every kept inbox to the cap, a batch
of readers a task, one batch in flight (``timelines.tasks.trim_inboxes``). The same
sweep releases the inboxes of readers away longer than FEED_INACTIVE_DAYS."""

from datetime import timedelta

import pytest
from django.core.cache import cache as django_cache
from django.utils import timezone

from accounts.models import User
from feed_project.pagination import Cursor
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from tests.timelines.test_first_window import cached
from timelines.home import home_feed, sweep_batch
from timelines.home._inbox import Inbox
from timelines.home._models import InboxEntry, InboxState
from timelines.tasks import TRIM_SWEEP, trim_inboxes

pytestmark = pytest.mark.django_db(transaction=True)

READERS = 5


@pytest.fixture
def readers_of_author(settings):
    settings.FEED_INBOX_CAP = 2
    settings.FEED_TRIM_BATCH = 2
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    readers = [UserFactory(last_active_at=now) for _ in range(READERS)]
    for reader in readers:
        follow(follower=reader, followee=author)
        Inbox(reader.pk).rebuild()
    return author, readers


def entries(reader) -> list[str]:
    return sorted(
        InboxEntry.objects.filter(reader_id=reader.pk).values_list("timeline_key", flat=True),
        reverse=True,
    )


def test_fan_out_writes_past_the_cap_and_the_sweep_keeps_the_newest(readers_of_author):
    author, readers = readers_of_author
    keys = [create_post(author=author, text=f"post {n}").timeline_key for n in range(4)]
    assert all(len(entries(reader)) == 4 for reader in readers)  # no write trimmed

    trim_inboxes()

    newest = sorted(keys, reverse=True)[:2]
    assert [entries(reader) for reader in readers] == [newest] * READERS
    assert django_cache.get(TRIM_SWEEP) is None  # the sweep ended


def test_a_batch_trims_its_readers_only_and_names_the_last(readers_of_author):
    author, readers = readers_of_author
    for n in range(3):
        create_post(author=author, text=f"post {n}")
    first_two = sorted(r.pk for r in readers)[:2]

    assert sweep_batch(0, size=2) == first_two[-1]

    assert [len(entries(r)) for r in sorted(readers, key=lambda r: r.pk)] == [2, 2, 3, 3, 3]
    assert sweep_batch(max(r.pk for r in readers), size=2) is None  # none left above


def test_a_sweep_is_not_started_while_the_last_one_is_making_progress(readers_of_author):
    author, readers = readers_of_author
    for n in range(3):
        create_post(author=author, text=f"post {n}")
    django_cache.set(TRIM_SWEEP, readers[0].pk, timeout=60)  # a sweep's last batch, just now

    trim_inboxes()

    assert all(len(entries(reader)) == 3 for reader in readers)
    django_cache.delete(TRIM_SWEEP)
    trim_inboxes()
    assert all(len(entries(reader)) == 2 for reader in readers)


def kept(readers) -> list[bool]:
    held = set(InboxState.objects.values_list("reader_id", flat=True))
    return [reader.pk in held for reader in readers]


def test_readers_away_are_pushed_to_until_the_sweep_releases_their_inboxes(readers_of_author):
    """Away is checked by the sweep, not by the fan-out: a kept inbox gets every post."""
    author, readers = readers_of_author
    for reader in readers:
        Inbox(reader.pk).older(None, 10)  # a page's read fills the cache
    away, never = readers[0], readers[1]
    User.objects.filter(pk=away.pk).update(last_active_at=timezone.now() - timedelta(days=8))
    User.objects.filter(pk=never.pk).update(last_active_at=None)

    before = create_post(author=author, text="before the sweep").timeline_key
    assert all(before in entries(reader) for reader in readers)

    trim_inboxes()

    assert kept(readers) == [False, False, True, True, True]
    assert [cached(reader) for reader in readers] == [False, False, True, True, True]
    assert entries(away) == entries(readers[2])  # the rows stay for the rebuild to replace

    after = create_post(author=author, text="after the sweep").timeline_key
    assert [after in entries(reader) for reader in readers] == [False, False, True, True, True]


def test_a_reader_back_after_the_release_gets_the_posts_pushed_meanwhile(readers_of_author):
    author, readers = readers_of_author
    reader = readers[0]
    User.objects.filter(pk=reader.pk).update(last_active_at=timezone.now() - timedelta(days=8))
    trim_inboxes()
    missed = create_post(author=author, text="while away").timeline_key

    page = home_feed(reader=User.objects.get(pk=reader.pk), cursor=Cursor(), limit=5)

    assert page.items[0].key == missed
    assert InboxState.objects.get(reader_id=reader.pk).built_at is not None
    assert missed in entries(reader)
