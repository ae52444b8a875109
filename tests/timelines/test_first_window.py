"""A page's first window: the cache read first, then the entries statement with the
state statement as its prelude (timelines.home._page._first_window).

The cache is read under the generation the process last saw, before the state
says whether that read may stand; each test below leaves a cache in Redis that
the state no longer bears out, and the page must not show it. Big accounts are
merged in as the process last found them for the reader: the tests at the end
change what it found, and the page must show what the state says.
"""

import re
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from psycopg import _queries as psycopg_queries

from accounts.models import User
from feed_project.pagination import Cursor
from posts.moderation.services import hide_post
from posts.services import create_post
from relations.services import follow, unfollow
from tests.factories import UserFactory
from tests.timelines.test_pull_merged import STALLED_PULL
from timelines.home import PULL_FAILED_NOTICE, home_feed
from timelines.home import _cache as cache
from timelines.home import _items as entries
from timelines.home import _pull as pull
from timelines.home import _state as opening
from timelines.home._models import InboxState
from timelines.home._trim import release
from timelines.home.pull_model import pull_reference_keys

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
    to the statement had saved (docs/BENCHMARKS.md, "Reads": "The statement's text on
    one line")."""
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


def test_a_released_inbox_is_rebuilt_though_a_cache_of_it_is_left(reader_and_author):
    reader, author = reader_and_author
    # Released as a page racing the sweep finds it: the row gone, the cache not yet.
    InboxState.objects.filter(reader_id=reader.pk).delete()
    missed = create_post(author=author, text="not pushed: the inbox was released")
    assert cached(reader)

    assert page(reader)[0] == missed.timeline_key


def test_an_author_pulled_since_the_cache_was_filled_is_merged_in(reader_and_author, settings):
    reader, author = reader_and_author
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 1  # one follower makes a big account

    pulled = create_post(author=author, text="merged in at read time, not pushed")

    assert page(reader)[0] == pulled.timeline_key


def test_releasing_an_inbox_drops_its_cache(reader_and_author):
    reader, _ = reader_and_author
    assert cached(reader)

    release([reader.pk])

    assert not cached(reader)
    assert not InboxState.objects.filter(reader_id=reader.pk).exists()


@pytest.fixture
def pulled_author(reader_and_author, settings):
    """The reader's author pulled at read time, as a big account is, and seen pulled by
    this process: the next page merges the author's posts into its one statement."""
    reader, author = reader_and_author
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 2
    follow(follower=UserFactory(), followee=author)  # its second follower: a big account
    create_post(author=author, text="merged in at read time")
    page(reader)  # its state read: the author pulled
    assert opening.pulled_seen(reader.pk) == [author.pk]
    return reader, author


@pytest.mark.plain_postgresql
def test_a_cached_page_with_an_author_pulled_is_one_statement_once_seen(pulled_author):
    reader, _ = pulled_author
    page(reader)  # the statement prepared on this connection

    with CaptureQueriesContext(connection) as queries:
        keys = [item.key for item in home_feed(reader=reader, cursor=Cursor(), limit=PAGE).items]
    statements = [q["sql"] for q in queries.captured_queries]

    assert keys == pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=PAGE)
    assert len(statements) == 1  # under the pull's time limit
    assert statements[0].startswith("SET LOCAL statement_timeout = ")
    assert "timelines_inboxstate" not in statements[0]  # an EXECUTE of it
    # Planned once: PostgreSQL would plan it for each call's values until a
    # generic plan looked no dearer (on the bench world, never).
    name = re.search(r"EXECUTE (\w+)\(", statements[0])[1]
    with connection.cursor() as db:
        db.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = %s",
            [name],
        )
        assert db.fetchone() == (2, 0)


def test_a_reader_who_unfollowed_the_author_seen_pulled_gets_none_of_their_posts(
    pulled_author,
):
    reader, author = pulled_author
    unfollow(follower=reader, followee=author)
    friend = UserFactory()
    follow(follower=reader, followee=friend)
    for n in range(5):
        create_post(author=friend, text=f"pushed {n}")

    page(reader)
    assert opening.pulled_seen(reader.pk) == []


def test_an_author_pulled_besides_the_one_seen_is_merged_in_too(pulled_author):
    reader, _ = pulled_author
    other = UserFactory()
    follow(follower=reader, followee=other)
    follow(follower=UserFactory(), followee=other)
    newest = create_post(author=other, text="by a big account the process has not seen")

    assert page(reader)[0] == newest.timeline_key


def test_a_page_with_posts_merged_in_below_the_inbox_is_read_step_by_step(settings):
    """The inbox holds three keys, the newer two of them hidden: the merged window's
    third entry lies below the inbox, where a post of someone pushed, trimmed from
    the inbox, may come first. Taken from the one statement, the page would skip it."""
    settings.FEED_INBOX_CAP = 3
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 2
    reader, friend, big, moderator = (UserFactory(last_active_at=timezone.now()) for _ in range(4))
    home_feed(reader=reader, cursor=Cursor())  # kept from now on
    follow(follower=reader, followee=friend)
    follow(follower=reader, followee=big)
    follow(follower=moderator, followee=big)  # big's second follower: pulled
    create_post(author=big, text="b1")
    create_post(author=friend, text="f1")
    create_post(author=big, text="b2")
    trimmed = create_post(author=friend, text="f2: trimmed from the inbox of three")
    inbox_bottom = create_post(author=friend, text="f3")
    hidden = [create_post(author=friend, text=f"f{n}") for n in (4, 5)]
    page(reader)  # the cache filled, the big account seen pulled
    assert opening.pulled_seen(reader.pk) == [big.pk]
    for post in hidden:
        hide_post(moderator=UserFactory(is_staff=True), post=post)

    assert page(reader) == [inbox_bottom.timeline_key, trimmed.timeline_key]


def test_a_merged_pull_that_times_out_still_serves_the_inbox_and_says_so(
    pulled_author, settings, monkeypatch
):
    reader, _ = pulled_author
    settings.FEED_PULL_TIMEOUT_MS = 50
    friend = UserFactory()
    follow(follower=reader, followee=friend)
    pushed = [create_post(author=friend, text=f"pushed {n}") for n in range(8)]

    monkeypatch.setattr(pull, "_NEAREST", STALLED_PULL)
    started = time.monotonic()
    shown = home_feed(reader=reader, cursor=Cursor(), limit=PAGE)

    assert time.monotonic() - started < 2
    assert [item.post.pk for item in shown.items] == [post.pk for post in pushed[:-3:-1]]
    assert shown.notices == [PULL_FAILED_NOTICE]


def test_the_pulled_authors_seen_are_kept_for_a_bounded_number_of_readers(monkeypatch):
    monkeypatch.setattr(opening, "_pulled_seen", {})
    monkeypatch.setattr(opening, "PULLED_SEEN_READERS", 3)
    for reader_id in range(1, 6):
        opening._saw_pulled(reader_id, [100 + reader_id])
    opening._saw_pulled(3, [7])  # read again: the latest
    opening._saw_pulled(4, [])  # follows no big account now

    assert opening._pulled_seen == {5: [105], 3: [7]}
