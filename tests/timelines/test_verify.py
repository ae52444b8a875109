"""The self-check: inboxes held to the pull model, repaired where they differ, and counted
(``timelines.home._inbox.verify``, the beat's ``timelines.verify_inboxes``,
``rebuild_timelines --verify``, ``fanout_stats``)."""

from io import StringIO

import pytest
from django.core.cache import cache as django_cache
from django.core.management import call_command
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from timelines import outbox
from timelines.home import _cache as cache
from timelines.home import _verify as verification
from timelines.home import home_feed
from timelines.home._inbox import Inbox
from timelines.home._models import InboxEntry
from timelines.home.pull_model import pull_reference_keys
from timelines.models import PendingTask
from timelines.tasks import VERIFIED, verify_inboxes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reader_of_five(settings):
    """A reader following an author of five posts, the inbox built and cached. Every
    post counts as settled (no delivery of it can still be on its way)."""
    settings.FEED_SWEEP_AFTER_SECONDS = 0
    now = timezone.now()
    author, reader = UserFactory(last_active_at=now), UserFactory(last_active_at=now)
    follow(follower=reader, followee=author)
    Inbox(reader.pk).rebuild()
    keys = [create_post(author=author, text=f"post {n}").timeline_key for n in range(5)]
    feed(reader)  # fills the cache
    assert cached(reader.pk) == sorted(keys, reverse=True)
    return reader, sorted(keys, reverse=True)


def feed(reader) -> list[str]:
    return [item.key for item in home_feed(reader=reader, cursor=Cursor(), limit=20).items]


def table(reader_id: int) -> list[str]:
    rows = InboxEntry.objects.filter(reader_id=reader_id).values_list("timeline_key", flat=True)
    return sorted(rows, reverse=True)


def cached(reader_id: int) -> list[str] | None:
    return cache.CachedInbox(reader_id, cache.generation()).older(None, 100)


def test_a_sound_inbox_is_checked_and_left_as_it_is(reader_of_five):
    reader, keys = reader_of_five

    assert verification.verify(reader.pk) == verification.Verified(
        reader.pk, missing=0, cache_missing=0
    )
    assert table(reader.pk) == keys
    assert cached(reader.pk) == keys  # not dropped


def test_rows_deleted_by_hand_are_written_again_and_counted(reader_of_five):
    reader, keys = reader_of_five
    InboxEntry.objects.filter(reader_id=reader.pk, timeline_key__in=keys[1:3]).delete()
    cache.drop(reader.pk)
    assert feed(reader) != pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=20)

    assert verify_inboxes(10) == 1

    assert table(reader.pk) == keys
    assert (
        feed(reader) == keys == pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=20)
    )
    last = django_cache.get(VERIFIED)
    assert (last["checked"], last["differed"], last["missing"]) == (1, 1, 2)
    out = StringIO()
    call_command("fanout_stats", stdout=out)
    assert "1 of 1 inboxes differed from the pull model and were repaired (2 posts" in (
        out.getvalue()
    )
    assert verify_inboxes(10) == 0  # healed


def test_a_cache_that_lost_an_entry_is_dropped_and_refilled(reader_of_five):
    reader, keys = reader_of_five
    redis = cache.client()
    redis.lrem(cache.inbox_key(reader.pk, cache.generation()), 1, keys[2])
    assert keys[2] not in feed(reader)

    assert verification.verify(reader.pk) == verification.Verified(
        reader.pk, missing=0, cache_missing=1
    )

    assert cached(reader.pk) is None
    assert feed(reader) == keys
    assert cached(reader.pk) == keys


def test_a_reader_whose_follow_is_on_its_way_is_not_judged(reader_of_five):
    reader, keys = reader_of_five
    InboxEntry.objects.filter(reader_id=reader.pk, timeline_key=keys[2]).delete()
    call = outbox.Call.of("timelines.sync_author", (reader.pk, 1))
    PendingTask.objects.create(
        owner=call.owner, task=call.task, args=call.encoded_args, changed_at=timezone.now()
    )

    assert verification.verify(reader.pk) is None
    assert keys[2] not in table(reader.pk)


def test_the_command_verifies_named_readers_and_a_sample(reader_of_five):
    reader, keys = reader_of_five
    InboxEntry.objects.filter(reader_id=reader.pk, timeline_key=keys[3]).delete()

    out = StringIO()
    call_command("rebuild_timelines", "--verify", "--user", reader.username, stdout=out)
    assert "1 posts missing from the table, 0 from the cache: repaired" in out.getvalue()
    assert "Verified 1 inboxes" in out.getvalue()
    assert table(reader.pk) == keys

    out = StringIO()
    call_command("rebuild_timelines", "--verify", "--sample", "5", stdout=out)
    assert "0 differed from the pull model" in out.getvalue()
