"""The merged pull (``timelines.home._pull.merged``) in the forms it takes for readers who
follow thousands, a walk of every author's posts and two passes of probes: for
any posts of a few authors and any cursor, exactly the first ``limit`` keys a
plain sort of all their live posts gives, with a time limit or without; and
the time limit (a pull of big accounts never holds up a page), cancelling the
pull and nothing after it."""

import time
from unittest import mock

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from feed_project.pagination import Cursor
from posts import ids
from posts.models import Post
from tests.factories import UserFactory
from timelines.home import _pull as pull

AUTHORS = 5
# A pull statement that stalls, in either form of pull._NEAREST.
STALLED_PULL = "SELECT '' AS timeline_key, a.id FROM {source} CROSS JOIN pg_sleep(5) {where}"
HOUR = 3_600_000
OFFSETS = st.integers(min_value=0, max_value=1000 * HOUR)  # ms into the past, up to ~6 weeks


@pytest.fixture(scope="module")
def authors(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        users = [UserFactory() for _ in range(AUTHORS)]
    yield [u.pk for u in users]
    with django_db_blocker.unblock():
        for user in users:
            user.delete()


def write_posts(authors: list[int], posts: list[tuple[int, int, str]], now: int) -> None:
    """Posts at ``now - offset`` by ``authors[n]``, deleted or hidden as ``state`` says."""
    rows, seen = [], set()
    for n, offset, state in posts:
        parts = ids.KeyParts(now - offset, authors[n], 0)
        while (parts.author, parts.time, parts.seq) in seen:
            parts = ids.KeyParts(parts.time, parts.author, parts.seq + 1)
        seen.add((parts.author, parts.time, parts.seq))
        rows.append(
            Post(
                id=ids.make_post_id(parts),
                timeline_key=ids.make_timeline_key(parts),
                author_id=parts.author,
                text="t",
                deleted_at=timezone.now() if state == "deleted" else None,
                hidden_at=timezone.now() if state == "hidden" else None,
            )
        )
    Post.objects.bulk_create(rows)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "walk",
    [0, 1, 50],
    ids=["probes", "walk-then-probes", "walk"],  # 1 a author: the walk often falls short
)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    posts=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=AUTHORS - 1),
            OFFSETS,
            st.sampled_from(["live", "live", "live", "deleted", "hidden"]),
        ),
        max_size=25,
    ),
    ends=st.tuples(st.none() | st.integers(0, 30), st.none() | st.integers(0, 30)),
    limit=st.integers(min_value=1, max_value=8),
)
@example(posts=[(0, HOUR, "live"), (1, HOUR - 1, "live")], ends=(None, None), limit=2)
@example(  # scans up
    posts=[(0, 1, "live"), (0, 1, "live"), (1, 5, "live"), (0, HOUR, "live")],
    ends=(None, 0),
    limit=2,
)
def test_merged_equals_a_sort_of_every_live_post(settings, walk, authors, posts, ends, limit):
    settings.FEED_PULL_WALK_ROWS_PER_AUTHOR = walk
    asked = authors[:-1]  # the last one's posts are among the walked ones, not asked for
    Post.objects.filter(author_id__in=authors).delete()
    write_posts(authors, posts, ids.time_of(timezone.now()))
    live = Post.objects.visible().filter(author_id__in=asked)
    keys = sorted(live.values_list("timeline_key", flat=True))
    before, after = (keys[n % len(keys)] if n is not None and keys else None for n in ends)
    if before is not None and after is not None and after >= before:
        before, after = None, after
    cursor = Cursor(before=before, after=after)

    # The forms for thousands of authors, on a few.
    with mock.patch.multiple(pull, SINGLE_PASS_ROWS=0, WALK_FROM_AUTHORS=0):
        got = pull.merged(asked, cursor=cursor, limit=limit)
        limited = pull.merged(asked, cursor=cursor, limit=limit, timeout_ms=10_000)

    inside = [k for k in keys if (before is None or k < before) and (after is None or k > after)]
    expected = inside[:limit] if cursor.newer_pages else inside[::-1][:limit]
    assert got == expected
    assert limited == expected


def statement_timeout() -> str:
    """The session's statement timeout, after a statement that outlasts 50 ms."""
    with connection.cursor() as db:
        db.execute("SELECT pg_sleep(0.2), current_setting('statement_timeout')")
        return db.fetchone()[1]


def a_stalled_pull_is_cancelled(monkeypatch, authors: list[int]) -> None:
    monkeypatch.setattr(pull, "_NEAREST", STALLED_PULL)
    started = time.monotonic()
    with pytest.raises(DatabaseError):
        pull.merged(authors, cursor=Cursor(), limit=3, timeout_ms=50)
    assert time.monotonic() - started < 2
    monkeypatch.undo()


@pytest.mark.plain_postgresql  # on Citus the limit goes in a transaction (the test below)
@pytest.mark.django_db(transaction=True)
def test_a_time_limited_pull_is_one_round_trip_that_leaves_no_limit_behind(monkeypatch, settings):
    authors = [UserFactory().pk for _ in range(3)]
    posts = [(n % 3, n * HOUR, "live") for n in range(12)] + [(0, 30 * HOUR, "deleted")]
    write_posts(authors, posts, ids.time_of(timezone.now()))
    keys = sorted(Post.objects.values_list("timeline_key", flat=True))
    unlimited = statement_timeout()
    cursors = [
        Cursor(),
        Cursor(before=keys[8]),
        Cursor(after=keys[3]),
        Cursor(before=keys[9], after=keys[2]),
    ]
    # Every statement a pull sends (probes in one pass or two, the walk, either form
    # of the probes), each on a new connection: prepared, then only executed.
    for forced, single_pass_rows, walk_from in ((None, 5_000, 10), (None, 0, 10), (True, 0, 0)):
        settings.FEED_ROUTED_READS = forced
        connection.close()
        for cursor in cursors:
            with mock.patch.multiple(
                pull, SINGLE_PASS_ROWS=single_pass_rows, WALK_FROM_AUTHORS=walk_from
            ):
                expected = pull.merged(authors, cursor=cursor, limit=3)
                with CaptureQueriesContext(connection) as first:
                    limited = pull.merged(authors, cursor=cursor, limit=3, timeout_ms=50)
                with CaptureQueriesContext(connection) as again:
                    assert pull.merged(authors, cursor=cursor, limit=3, timeout_ms=50) == limited

            assert limited == expected
            assert len(limited) == 3
            sent = [query["sql"] for query in again]
            assert sent and all(
                sql.startswith("SET LOCAL statement_timeout = 50; EXECUTE timed_") for sql in sent
            )
            # Each statement prepared once: a failed EXECUTE, the PREPARE, the EXECUTE.
            assert len(first) in (len(sent), 3 * len(sent))
            assert statement_timeout() == unlimited
    a_stalled_pull_is_cancelled(monkeypatch, authors)
    assert statement_timeout() == unlimited


@pytest.mark.django_db(transaction=True)
def test_a_time_limited_pull_still_runs_after_a_rollback_drops_what_was_prepared(authors):
    """psycopg deallocates every prepared statement on a connection once a rollback
    follows statements of its own it prepared (here, the sixth run of one): the
    pull, prepared before, must prepare again, not fail from then on."""
    connection.close()
    expected = pull.merged(authors, cursor=Cursor(), limit=3)
    assert pull.merged(authors, cursor=Cursor(), limit=3, timeout_ms=1_000) == expected
    for _ in range(6):
        with connection.cursor() as db:
            db.execute("SELECT %s::int", [1])
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        Post.objects.count()
        raise ZeroDivisionError

    with connection.cursor() as db:
        db.execute("SELECT count(*) FROM pg_prepared_statements")
        assert db.fetchone() == (0,)
    assert pull.merged(authors, cursor=Cursor(), limit=3, timeout_ms=1_000) == expected


@pytest.mark.django_db
def test_a_time_limited_pull_in_a_transaction_leaves_the_rest_of_it_no_limit(monkeypatch, authors):
    unlimited = statement_timeout()
    pull.merged(authors, cursor=Cursor(), limit=3, timeout_ms=50)
    assert statement_timeout() == unlimited
    a_stalled_pull_is_cancelled(monkeypatch, authors)
    assert statement_timeout() == unlimited
