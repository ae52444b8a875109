"""A page's first window: the cache read first, then the entries statement with the
state statement as its prelude (timelines.feed._first_window).

The cache is read under the generation the process last saw, before the state
says whether that read may stand; each test below leaves a cache in Redis that
the state no longer bears out, and the page must not show it.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from psycopg import _queries as psycopg_queries

from accounts.models import User
from feed_project.pagination import Cursor
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from timelines import cache, entries
from timelines.feed import home_feed
from timelines.inbox import Inbox
from timelines.models import InboxState
from timelines.reference import pull_reference_keys

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = 2  # a window of 9 keys: a few posts fill a page


@pytest.fixture
def reader_and_author():
    """A reader following an author with more posts than a page, cache warm, its
    generation seen by this process."""
    reader, author = UserFactory(last_active_at=timezone.now()), UserFactory()
    home_feed(reader=reader, cursor=Cursor())  # kept from now on
    follow(follower=reader, followee=author)
    for n in range(5):
        create_post(author=author, text=f"post {n}")
    page(reader)  # fills the cache
    page(reader)
    return reader, author


def page(reader: User) -> list[str]:
    """Page one's keys, held to the pull-model reference."""
    keys = [item.key for item in home_feed(reader=reader, cursor=Cursor(), limit=PAGE).items]
    assert keys == pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=PAGE)
    return keys


def cached(reader: User) -> bool:
    redis = cache.client()
    return bool(redis.exists(cache.inbox_key(reader.pk, cache.generation())))


@pytest.mark.plain_postgresql
def test_a_cached_page_with_no_author_pulled_is_one_statement(reader_and_author):
    reader, _ = reader_and_author
    assert entries.follows_a_prelude()

    with CaptureQueriesContext(connection) as queries:
        page(reader)
        # The reference's own queries come after the page's.
        statements = [q["sql"] for q in queries.captured_queries]

    assert "LEFT JOIN LATERAL" in statements[0]
    assert "timelines_inboxstate" in statements[0]
    assert "timelines_inboxstate" not in " ".join(statements[1:])


@pytest.mark.plain_postgresql
def test_a_cached_pages_statement_fits_psycopgs_statement_caches(reader_and_author):
    """Past 4,096 bytes or 50 parameters psycopg parses a statement's text on every
    call: 0.45 ms of CPU a page on the fourteenth pass's machine, more than a change
    to the statement had saved (docs/BENCHMARKS.md, "Fourteenth pass")."""
    reader, _ = reader_and_author
    sent = []

    def record(execute, sql, params, many, context):
        sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        home_feed(reader=reader, cursor=Cursor(), limit=PAGE)

    sql, params = sent[0]
    assert "LEFT JOIN LATERAL" in sql  # the page's one statement
    assert len(sql.encode()) <= psycopg_queries.MAX_CACHED_STATEMENT_LENGTH
    assert len(params) <= psycopg_queries.MAX_CACHED_STATEMENT_PARAMS


def test_a_cache_of_an_older_generation_is_not_read_though_the_process_saw_it_last(
    reader_and_author,
):
    reader, author = reader_and_author
    cache.invalidate_all("a write to Redis failed")  # the cache read last is not current
    newest = create_post(author=author, text="pushed to the table, not to the old cache")

    assert page(reader)[0] == newest.timeline_key


def test_an_inbox_marked_stale_is_rebuilt_though_a_cache_of_it_is_left(reader_and_author):
    reader, author = reader_and_author
    User.objects.filter(pk=reader.pk).update(last_active_at=timezone.now() - timedelta(days=30))
    missed = create_post(author=author, text="not pushed: the reader was away")
    # Marked stale as a page racing the reader's return finds it: the cache still there.
    InboxState.objects.filter(reader_id=reader.pk).update(built_at=None)
    assert cached(reader)

    assert page(reader)[0] == missed.timeline_key


def test_an_author_pulled_since_the_cache_was_filled_is_merged_in(reader_and_author, settings):
    reader, author = reader_and_author
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 1  # one follower makes a big account

    pulled = create_post(author=author, text="merged in at read time, not pushed")

    assert page(reader)[0] == pulled.timeline_key


def test_marking_an_inbox_stale_drops_its_cache(reader_and_author):
    reader, _ = reader_and_author
    assert cached(reader)

    Inbox(reader.pk).mark_stale()

    assert not cached(reader)
