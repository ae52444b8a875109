"""The tag-page benchmark: ``/tags/<tag>/`` over a million posts.

Runs on the search benchmark's world (``bench.search``: 1,000,000 posts of
20,000 authors over 60 days, 1 in 97 hidden, 1 in 89 deleted) with tag rows
added once: every live post carries one tag of a long tail of 5,000, and
``news`` (1 post in 10), ``咖啡`` (1 in 1,000) and ``zeppelin`` (1 in
100,000) on top; about 1.1 million ``PostTag`` rows. The rows are written
straight into the tag index (COPY), not parsed from the posts' text: the tag
page reads the index and the posts, never the text.

Figures, p50 and p99 in milliseconds after warm-up and the CPU of a call here
and in PostgreSQL (``bench.search.timed``), signed-in viewer (so the block
checks run), first page and the page after it:

- ``tag_page``: the selector (``posts.tags.tag_page``): one statement;
- ``GET /tags/<tag>/``: the whole page in process (middleware, session,
  the selector, viewer marks, quotes, the template), as ``bench_http`` does
  for other pages but without the HTTP server;
- baselines, same rows, same order, same limit: live posts whose id is
  among the tag's rows, ordered by the posts' timeline key (what search's
  ``#tag`` did first) and the bare index range scan (the floor: tag rows
  only, no join, no visibility).
"""

import random
from collections.abc import Callable

from django.db import connection
from django.test import Client

from accounts.models import User
from bench.bulk import Progress, no_progress, write_rows
from bench.search import HEADER, Figure, row, timed
from feed_project.pagination import Cursor
from posts.content_models import PostTag
from posts.models import Post
from posts.tags import tag_page, tagged_post_ids

Log = Callable[[str], None]

LONG_TAIL = 5_000
SLICE = 50_000  # posts read, then written by one COPY: a few MB of rows in memory
EXTRA_TAGS = (("news", 10), ("咖啡", 1_000), ("zeppelin", 100_000))


def tags_exist() -> bool:
    return PostTag.objects.exists()


def build_tags(*, log: Log, progress: Progress = no_progress, seed: int = 12) -> None:
    """Write the tag rows of every live post (COPY), then VACUUM ANALYZE the index.

    Posts are read in slices by primary key, each slice written by one COPY:
    a COPY holds the connection, so the reads cannot run inside it.
    """
    rng = random.Random(seed)
    live = Post.objects.filter(deleted_at__isnull=True, repost_of__isnull=True)
    total = live.count()
    extra = sum(total // every for _, every in EXTRA_TAGS)
    log(f"Writing about {total + extra:,} tag rows (COPY) ...")
    bar = progress("tags", total)
    count, last = 0, ""
    while True:
        batch = list(
            live.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", "author_id", "timeline_key")[:SLICE]
        )
        if not batch:
            break
        rows = []
        for post_id, author_id, key in batch:
            count += 1
            rows.append((author_id, post_id, f"tail{rng.randrange(LONG_TAIL)}", key))
            rows += [
                (author_id, post_id, tag, key) for tag, every in EXTRA_TAGS if count % every == 0
            ]
        write_rows(
            PostTag, ("author", "post", "tag", "timeline_key"), rows, len(rows), "tags", no_progress
        )
        bar.update(len(batch))
        last = batch[-1][0]
    bar.close()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE posts_posttag")


def _posts_in_tag_ids(tag: str) -> list[Post]:
    """The first version of search's ``#tag``: live posts whose id is among the tag's rows,
    newest first by the posts' own timeline key."""
    posts = (
        Post.objects.visible()
        .filter(pk__in=tagged_post_ids(tag))
        .select_related("author")
        .order_by("-timeline_key")
    )
    return list(posts[:21])


def _bare_range_scan(tag: str) -> list:
    return list(
        PostTag.objects.filter(tag=tag).order_by("-timeline_key").values_list("post_id")[:21]
    )


def run(*, samples: int, log: Log) -> list[Figure]:
    """Time the tag page, its selector and the baselines for a common, a middling and a rare tag."""
    viewer = User.objects.filter(username="sb_1").first()
    client = Client(HTTP_HOST="localhost")
    client.force_login(viewer)
    figures: list[Figure] = []

    def measure(label: str, tag: str, call: Callable[[], object], matches: int) -> None:
        figure = timed(label, tag, matches, call, samples)
        figures.append(figure)
        log(f"  {label:<22} {tag:<16} {matches:>9,} {row(figure)}")

    def get(path: str) -> None:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)

    log(f"  {'what':<22} {'tag':<16} {'matches':>9} {HEADER}")
    for tag, _ in EXTRA_TAGS:
        matches = PostTag.objects.filter(tag=tag).count()
        measure(
            "tag_page",
            tag,
            lambda t=tag: tag_page(tag=t, viewer_id=viewer.pk, cursor=Cursor()),
            matches,
        )
        page = tag_page(tag=tag, viewer_id=viewer.pk, cursor=Cursor())
        if page.older:
            measure(
                "tag_page page 2",
                tag,
                lambda t=tag, c=page.older: tag_page(
                    tag=t, viewer_id=viewer.pk, cursor=Cursor(before=c)
                ),
                matches,
            )
        path = f"/tags/{tag}/"
        measure("GET /tags/<tag>/", tag, lambda p=path: get(p), matches)
        measure("baseline: IN tag's ids", tag, lambda t=tag: _posts_in_tag_ids(t), matches)
        measure("floor: index only", tag, lambda t=tag: _bare_range_scan(t), matches)
    return figures
