"""The merged pull (``timelines.pull.merged``) in the forms it takes for readers who
follow thousands, a walk of every author's posts and two passes of probes: for
any posts of a few authors and any cursor, exactly the first ``limit`` keys a
plain sort of all their live posts gives."""

from unittest import mock

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from feed_project.pagination import Cursor
from posts import ids
from posts.models import Post
from tests.factories import UserFactory
from timelines import pull

AUTHORS = 5
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

    inside = [k for k in keys if (before is None or k < before) and (after is None or k > after)]
    expected = inside[:limit] if cursor.newer_pages else inside[::-1][:limit]
    assert got == expected
