"""Hashtags: ``#tag`` and Weibo's ``#话题#`` in a post's text, the tag index, trending tags.

A tag is letters, digits, underscores and combining marks of any script,
at least one of them not a digit, at most MAX_TAG_LENGTH
characters; Weibo's form closes it with a second ``#`` so that the text may
go on without a space (``#话题#今天``). Anything else is plain text (a ``#``
alone, a run of 500 letters): never an error. A tag is stored normalized
(NFKC, lower-cased), so ``#Django`` and ``#django`` are one tag.

Tags are written with the post, and rewritten by an edit, into ``PostTag``
(one row per post and tag, beside the post: posts/content_models.py); the
tag page is a range scan of ``post_tag_page_idx`` (tag, timeline_key).
Trending tags are computed by a periodic task (``posts.compute_trending``)
into ``TrendingTag``; pages only read that table.
"""

import re
import unicodedata
from datetime import datetime, timedelta
from urllib.parse import quote

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from feed_project import sharding
from feed_project.pagination import Cursor, Page, keyset_page
from posts import ids, page_queries
from posts.content_models import MAX_TAG_LENGTH, PostTag, TrendingTag
from posts.models import Post
from posts.visibility import is_listed, visible_to, without_muted_words


def _combining_marks() -> str:
    """Ranges of the BMP's combining marks (Unicode category M), for a character class.

    Python's ``\\w`` leaves them out, and without them a Devanagari or Thai word
    (हिन्दी) stops at its first vowel sign. 189 ranges, found once, at import.
    """
    ranges, start, last = [], None, 0
    for code in range(0x300, 0x10000):
        if unicodedata.category(chr(code)).startswith("M"):
            start = code if start is None else start
            last = code
        elif start is not None:
            ranges.append(f"\\u{start:04x}-\\u{last:04x}")
            start = None
    return "".join(ranges)


# A tag's character: a letter or digit of any script, "_", or a combining mark.
TAG_CHAR = f"[\\w{_combining_marks()}]"
# Not after a word character, "&" or "/" (an entity, a path), nor after "#";
# Weibo's form ends at its closing "#", the plain form where the word ends.
HASHTAG = re.compile(rf"(?<![\w&/#])#({TAG_CHAR}{{1,{MAX_TAG_LENGTH}}})(?:#|(?!{TAG_CHAR}))")
_TAG = re.compile(f"{TAG_CHAR}+")
MAX_TAGS_PER_POST = 20
TRENDING_SHOWN = 10
TRENDING_WINDOW = timedelta(hours=24)


def normalize_tag(name: str) -> str | None:
    """The stored form of a tag (NFKC, lower-cased), or None when it is not a tag."""
    normalized = unicodedata.normalize("NFKC", name).lower()
    if (
        not normalized
        or len(normalized) > MAX_TAG_LENGTH
        or not _TAG.fullmatch(normalized)
        or normalized.isdigit()
    ):
        return None
    return normalized


def hashtags(text: str) -> list[str]:
    """The distinct tags of ``text``, normalized, in order, the first MAX_TAGS_PER_POST."""
    found: list[str] = []
    for match in HASHTAG.finditer(text):
        tag = normalize_tag(match.group(1))
        if tag is not None and tag not in found:
            found.append(tag)
            if len(found) == MAX_TAGS_PER_POST:
                break
    return found


def tag_path(tag: str) -> str:
    """The tag's part of ``/tags/<tag>/``: lower-cased, URL-encoded."""
    return quote(tag, safe="")


def write_tags(*, post: Post, new: bool = False) -> None:
    """Make the post's ``PostTag`` rows those of its text; the caller holds the transaction.

    Rows of the post's author and id only: one shard. A ``new`` post has none
    to delete, and a text without a tag costs no statement at all.
    """
    # Only public posts are listed on tag pages (posts.visibility.is_listed).
    tags = hashtags(post.text) if is_listed(post) and not post.deleted_at else []
    if not new:
        stale = PostTag.objects.filter(author_id=post.author_id, post_id=post.pk)
        stale.exclude(tag__in=tags).delete()
    if tags:
        PostTag.objects.bulk_create(
            [
                PostTag(
                    author_id=post.author_id,
                    post_id=post.pk,
                    tag=tag,
                    timeline_key=post.timeline_key,
                )
                for tag in tags
            ],
            ignore_conflicts=True,
        )


def tag_page(*, tag: str, viewer_id: int | None, cursor: Cursor, limit: int | None = None) -> Page:
    """The live posts carrying ``tag`` the viewer may see, newest first: one query.

    A backward range scan of ``post_tag_page_idx``, each row joined to its post
    by id and to the author; posts gone, hidden or by someone blocked either way
    are skipped by the scan, so a page is always full while posts remain.
    """
    limit = limit or settings.FEED_PAGE_SIZE
    if sharding.on_citus(connection):
        return _tag_page_routed(tag=tag, viewer_id=viewer_id, cursor=cursor, limit=limit)
    rows = (
        PostTag.objects.filter(tag=tag, post__deleted_at__isnull=True, post__hidden_at__isnull=True)
        # Joined on the id alone. The author too (the distribution column, which
        # Citus needs to join inside each shard) makes PostgreSQL take the two
        # conditions for independent, expect one row, and hash-join and sort a
        # whole tag (bench_search --tags, docs/BENCHMARKS.md). On Citus,
        # _tag_page_routed (docs/SCALING.md).
        .select_related("post", "post__author")
    )
    rows = without_muted_words(visible_to(rows, viewer_id), viewer_id, "post__")
    page = keyset_page(rows, field="timeline_key", cursor=cursor, limit=limit)
    return Page(items=[row.post for row in page.items], older=page.older, newer=page.newer)


def _tag_page_routed(*, tag: str, viewer_id: int | None, cursor: Cursor, limit: int) -> Page:
    """``tag_page`` on a Citus cluster, which cannot join a tag row to its post on the
    id alone: a page of the tag's rows (every shard, one index range each), then the
    posts by ``with_ids`` (each on its author's shard). A post deleted or hidden
    since is left out after the page, so such a page holds fewer than ``limit``."""
    rows = visible_to(PostTag.objects.filter(tag=tag), viewer_id)
    page = keyset_page(rows, field="timeline_key", cursor=cursor, limit=limit)
    posts = (
        Post.objects.with_ids([row.post_id for row in page.items])
        .visible()
        .select_related("author")
        .in_bulk()
    )
    items = [posts[row.post_id] for row in page.items if row.post_id in posts]
    return Page(items=items, older=page.older, newer=page.newer)


def tagged_post_ids(tag: str) -> QuerySet:
    """A subquery of the ids of the posts carrying ``tag`` (search's ``#tag``)."""
    return PostTag.objects.filter(tag=tag).values("post_id")


def compute_trending(*, now: datetime | None = None) -> list[TrendingTag]:
    """Rewrite ``TrendingTag``: the tags of the last 24 hours by the most distinct authors.

    Run by the periodic task ``posts.compute_trending``, never by a page: it
    reads every shard (one range of ``post_tag_recent_idx`` each).
    """
    now = now or timezone.now()
    time = max(0, ids.time_of(now - TRENDING_WINDOW))
    since = ids.make_timeline_key(ids.KeyParts(time=time, author=0, seq=0))
    recent = PostTag.objects.filter(timeline_key__gte=since)
    if sharding.on_citus(connection):
        # No join of a tag row to its post on the id alone there: the window's
        # live posts as a list first (Citus plans the subquery on its own).
        live = Post.objects.visible().filter(timeline_key__gte=since).values("id")
        recent = recent.filter(post_id__in=live)
    else:
        recent = recent.filter(post__deleted_at__isnull=True, post__hidden_at__isnull=True)
    counted = (
        recent.values("tag")
        .annotate(authors=Count("author_id", distinct=True))
        .order_by("-authors", "tag")[:TRENDING_SHOWN]
    )
    trending = [
        TrendingTag(tag=row["tag"], rank=rank, authors=row["authors"], computed_at=now)
        for rank, row in enumerate(counted, start=1)
    ]
    with transaction.atomic():
        TrendingTag.objects.all().delete()
        TrendingTag.objects.bulk_create(trending)
    return trending


def trending() -> list[TrendingTag]:
    """The trending tags as last computed: one query of a table of ten rows, in plain
    SQL (every home page's sidebar: the QuerySet would cost more CPU than the query)."""
    sql = (
        f"SELECT {page_queries.columns(TrendingTag)} FROM {TrendingTag._meta.db_table}"
        " ORDER BY rank"
    )
    return page_queries.models(TrendingTag, sql, {})


def tags_matching(query: str, *, limit: int = TRENDING_SHOWN) -> list[str]:
    """Tags for a search: the query's own tag (``#`` optional) when a listed post carries
    it, then the trending tags it begins, at most ``limit``: at most two small queries
    (the tag index has no prefix scan, so only the trending table is read by prefix)."""
    tag = normalize_tag(query.strip().removeprefix("#"))
    if tag is None:
        return []
    found = [tag] if PostTag.objects.filter(tag=tag).exists() else []
    found += [row.tag for row in trending() if row.tag.startswith(tag) and row.tag != tag]
    return found[:limit]
