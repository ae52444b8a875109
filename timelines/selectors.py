"""Reading the home feed.

``pull_reference_keys`` is the pull model of DESIGN.md written as plainly as
possible: the reference every delivery path is tested against. ``home_feed``
is the product: inbox (Redis cache, else the table), plus the big accounts
pulled at read time, plus pull below the inbox's oldest entry.
"""

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from accounts.models import User
from feed_project.pagination import Cursor, Page, make_page
from posts import ids
from posts.models import Post
from posts.selectors import check_key_cursor
from relations.models import Block, Followee, Mute
from timelines import cache, pull, services
from timelines.cache import CachedInbox
from timelines.models import CacheGeneration, InboxEntry, PullAuthor, TimelineState

logger = logging.getLogger(__name__)

PULL_FAILED_NOTICE = "Some posts from popular accounts may be missing; try again in a moment."
# A page reads keys WINDOW_FACTOR times its size; when even that many come
# back mostly dropped, it reads on, each window twice the last, at most
# MAX_WINDOWS times before it settles for what it has.
WINDOW_FACTOR = 3
MAX_WINDOWS = 8


@dataclass
class FeedItem:
    """One entry of a feed: a post, and who of the people you follow reposted it."""

    key: str
    post: Post
    reposted_by: list[User] = field(default_factory=list)


def page_size(limit: int | None) -> int:
    if limit is None:
        return settings.FEED_PAGE_SIZE
    return max(1, min(limit, settings.FEED_MAX_PAGE_SIZE))


def pull_reference_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """Timeline keys of the reader's feed by the pull model, in scan order.

    Entries are the live posts and reposts by the accounts the reader follows
    now, and the reader's own, less those by muted accounts, and less reposts
    whose original is gone, hidden, or by an account muted or blocked either
    way. A post and its reposts collapse to one item at the newest of them.
    """
    followees = Followee.objects.filter(user_id=reader_id).values("followee_id")
    muted = Mute.objects.filter(user_id=reader_id).values("muted_id")
    blocked = Block.objects.filter(user_id=reader_id).values("blocked_id")
    blockers = Block.objects.filter(blocked_id=reader_id).values("user_id")
    entries = (
        Post.objects.visible()
        .filter(Q(author_id__in=followees) | Q(author_id=reader_id))
        .exclude(author_id__in=muted)
        .filter(
            Q(repost_of__isnull=True)
            | Q(repost_of__deleted_at__isnull=True, repost_of__hidden_at__isnull=True)
            & ~Q(repost_of__author_id__in=muted)
            & ~Q(repost_of__author_id__in=blocked)
            & ~Q(repost_of__author_id__in=blockers)
        )
        .values_list("timeline_key", "repost_of_id", "id")
    )
    newest: dict[str, str] = {}
    for key, repost_of_id, post_id in entries:
        original = repost_of_id or post_id
        newest[original] = max(key, newest.get(original, key))
    keys = sorted(newest.values(), reverse=not cursor.newer_pages)
    if cursor.before is not None:
        keys = [key for key in keys if key < cursor.before]
    if cursor.after is not None:
        keys = [key for key in keys if key > cursor.after]
    return keys[:limit]


def pull_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """The pull model by per-author range scans: what the engine falls back to."""
    authors = list(Followee.objects.filter(user_id=reader_id).values_list("followee_id", flat=True))
    return pull.merged([*authors, reader_id], cursor=cursor, limit=limit)


# The first ``limit`` entries among these posts that the reader's feed shows, in
# scan order, each with its author, its original (for a repost) and the
# original's author. An entry shows if the reader may see it now, and if no
# newer repost of the same original by someone they follow shows instead (a
# post and its reposts collapse to the newest of them, seed 004). One
# statement: the same rules as ORM Exists() filters cost ~6 ms of query
# building a page. Every subquery is a probe of an index led by the reader or
# by the original (post_reposts_idx).
_ENTRIES_SQL = """
SELECT {post_columns}, a.username, a.display_name,
  {original_columns}, oa.username, oa.display_name
FROM {post} p
JOIN {user} a ON a.id = p.author_id
LEFT JOIN {post} o ON o.id = p.repost_of_id
LEFT JOIN {user} oa ON oa.id = o.author_id
WHERE p.id IN ({post_ids})
  AND p.deleted_at IS NULL AND p.hidden_at IS NULL
  AND (p.author_id = %(reader)s OR EXISTS (
         SELECT 1 FROM {followee} f WHERE f.user_id = %(reader)s AND f.followee_id = p.author_id))
  AND NOT EXISTS (
         SELECT 1 FROM {mute} m WHERE m.user_id = %(reader)s AND m.muted_id = p.author_id)
  AND (p.repost_of_id IS NULL OR (
         o.deleted_at IS NULL AND o.hidden_at IS NULL
         AND NOT EXISTS (
           SELECT 1 FROM {mute} m WHERE m.user_id = %(reader)s AND m.muted_id = o.author_id)
         AND NOT EXISTS (
           SELECT 1 FROM {block} b WHERE b.user_id = %(reader)s AND b.blocked_id = o.author_id)
         AND NOT EXISTS (
           SELECT 1 FROM {block} b WHERE b.user_id = o.author_id AND b.blocked_id = %(reader)s)))
  AND NOT EXISTS (
         SELECT 1 FROM {post} r
         WHERE r.repost_of_id = COALESCE(p.repost_of_id, p.id)
           AND r.timeline_key > p.timeline_key
           AND r.deleted_at IS NULL AND r.hidden_at IS NULL
           AND (r.author_id = %(reader)s OR EXISTS (
                  SELECT 1 FROM {followee} f
                  WHERE f.user_id = %(reader)s AND f.followee_id = r.author_id))
           AND NOT EXISTS (
                  SELECT 1 FROM {mute} m WHERE m.user_id = %(reader)s AND m.muted_id = r.author_id))
ORDER BY p.timeline_key {direction}
LIMIT %(limit)s
"""
_POST_FIELDS = [field.attname for field in Post._meta.concrete_fields]
_POST_COLUMNS = [field.column for field in Post._meta.concrete_fields]
_AUTHOR_AT = _POST_FIELDS.index("author_id")
# What feeds show of an author; anything else would load on first use (the page
# query-count tests would see it).
_AUTHOR_FIELDS = ["id", "username", "display_name"]


def _post_of(values: tuple, author_id: int, author: tuple) -> Post:
    post = Post.from_db(connection.alias, _POST_FIELDS, values)
    post.author = User.from_db(connection.alias, _AUTHOR_FIELDS, (author_id, *author))
    return post


def _shown_entries(
    post_ids: list[str], *, reader_id: int, limit: int, ascending: bool
) -> list[Post]:
    """The first ``limit`` entries among ``post_ids`` that the reader's feed shows,
    in scan order, with their authors and originals loaded."""
    params: dict[str, object] = {"reader": reader_id, "limit": limit}
    params.update({f"p{n}": post_id for n, post_id in enumerate(post_ids)})
    sql = _ENTRIES_SQL.format(
        post=Post._meta.db_table,
        user=User._meta.db_table,
        followee=Followee._meta.db_table,
        mute=Mute._meta.db_table,
        block=Block._meta.db_table,
        post_columns=", ".join(f"p.{column}" for column in _POST_COLUMNS),
        original_columns=", ".join(f"o.{column}" for column in _POST_COLUMNS),
        post_ids=", ".join(f"%(p{n})s" for n in range(len(post_ids))),
        direction="ASC" if ascending else "DESC",
    )
    width = len(_POST_COLUMNS)
    entries = []
    with connection.cursor() as db:
        db.execute(sql, params)
        for row in db.fetchall():
            post = _post_of(row[:width], row[_AUTHOR_AT], row[width : width + 2])
            original_row = row[width + 2 : 2 * width + 2]
            if post.repost_of_id:
                post.repost_of = _post_of(
                    original_row, original_row[_AUTHOR_AT], row[2 * width + 2 : 2 * width + 4]
                )
            entries.append(post)
    return entries


def _reposts_seen_by(reader_id: int, original_ids: list[str]) -> QuerySet[Post]:
    """Live reposts of these posts by people the reader follows (or the reader), newest first."""
    followed = Followee.objects.filter(user_id=reader_id, followee_id=OuterRef("author_id"))
    muted = Mute.objects.filter(user_id=reader_id, muted_id=OuterRef("author_id"))
    return (
        Post.objects.visible()
        .filter(repost_of_id__in=original_ids)
        .filter(Q(author_id=reader_id) | Exists(followed))
        .exclude(Exists(muted))
        .select_related("author")
        .order_by("-timeline_key")
    )


def hydrate(
    keys: list[str], *, reader_id: int, limit: int | None = None, ascending: bool = False
) -> list[FeedItem]:
    """The first ``limit`` feed items among these entry keys, in scan order.

    Entries count only if the reader may see them now: by people they follow
    (so an unfollow, a block or a mute takes effect at once, before any inbox
    is cleaned) and, for reposts, with a visible original; each original shows
    once, at its newest entry, with who of the people the reader follows
    reposted it. Two queries, the second only when a post shown was reposted.
    """
    if not keys:
        return []
    entries = _shown_entries(
        [ids.timeline_key_to_post_id(key) for key in keys],
        reader_id=reader_id,
        limit=limit or len(keys),
        ascending=ascending,
    )
    reposted = [
        original.pk
        for original in (post.repost_of or post for post in entries)
        if original.repost_count
    ]
    reposters: dict[str, list[User]] = {}
    for shared in _reposts_seen_by(reader_id, reposted) if reposted else []:
        reposters.setdefault(shared.repost_of_id, []).append(shared.author)
    return [
        FeedItem(
            key=post.timeline_key,
            post=post.repost_of or post,
            reposted_by=reposters.get(post.repost_of_id or post.pk, []),
        )
        for post in entries
    ]


class _Inbox:
    """One reader's inbox: the Redis cache when it has it, else the table."""

    def __init__(self, owner_id: int, generation: int) -> None:
        self.owner_id = owner_id
        self.cached = CachedInbox(owner_id, generation)
        self.rows: list[str] | None = None  # the table's keys, newest first, once read

    def _table(self) -> list[str]:
        """The whole inbox from the table, newest first; fills the cache on the way."""
        if self.rows is None:
            token = self.cached.begin_fill()
            self.rows = list(
                InboxEntry.objects.filter(owner_id=self.owner_id)
                .order_by("-timeline_key")
                .values_list("timeline_key", flat=True)[: settings.FEED_INBOX_CAP]
            )
            if token is not None:
                self.cached.finish_fill(token, self.rows)
        return self.rows

    def older(self, before: str | None, limit: int) -> list[str]:
        keys = self.cached.older(before, limit)
        if keys is not None:
            return keys
        rows = self._table()
        return [key for key in rows if before is None or key < before][:limit]

    def newer(self, after: str, limit: int) -> tuple[list[str], bool]:
        result = self.cached.newer(after, limit)
        if result is not None:
            return result
        rows = self._table()
        above = [key for key in reversed(rows) if key > after][:limit]
        return above, bool(rows) and rows[-1] <= after


def _with_timeout(query, *args, **kwargs) -> list[str] | None:
    """Run a pull that must never block the page (seed 002): None if it fails."""
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as db:
                    db.execute(
                        "SELECT set_config('statement_timeout', %s, true)",
                        [str(settings.FEED_PULL_TIMEOUT_MS)],
                    )
            return query(*args, **kwargs)
    except DatabaseError:
        logger.exception("pull of big accounts failed")
        return None


def _window(
    *,
    reader_id: int,
    inbox: _Inbox,
    pulled: list[int],
    cursor: Cursor,
    limit: int,
    notices: list[str],
) -> list[str]:
    """``limit`` keys from the cursor on, in scan order, from every source."""
    if cursor.newer_pages:
        keys, covered = inbox.newer(cursor.after, limit)
        if not covered:  # the cursor is below the inbox: pull the whole window
            keys = pull_keys(reader_id=reader_id, cursor=cursor, limit=limit)
    else:
        keys = inbox.older(cursor.before, limit)
        if len(keys) < limit:  # ran past the inbox's oldest entry: pull the rest
            below = Cursor(before=keys[-1]) if keys else cursor
            keys += pull_keys(reader_id=reader_id, cursor=below, limit=limit - len(keys))
    if pulled:
        extra = _with_timeout(pull.merged, pulled, cursor=cursor, limit=limit)
        if extra is None:
            if PULL_FAILED_NOTICE not in notices:
                notices.append(PULL_FAILED_NOTICE)
        else:
            keys = sorted({*keys, *extra}, reverse=not cursor.newer_pages)[:limit]
    return keys


_STATE_SQL = """
SELECT s.built_at,
  (SELECT g.value FROM {generation} g WHERE g.id = 1),
  EXISTS (SELECT 1 FROM {pull} pa WHERE pa.author_id = %(reader)s OR pa.author_id IN (
            SELECT f.followee_id FROM {followee} f WHERE f.user_id = %(reader)s))
FROM {state} s WHERE s.owner_id = %(reader)s
"""


def _reader_state(reader_id: int) -> tuple[int, bool] | None:
    """(cache generation, follows any pull-delivered author) for a built inbox, else None.

    One query for what every page needs before it reads keys.
    """
    sql = _STATE_SQL.format(
        generation=CacheGeneration._meta.db_table,
        pull=PullAuthor._meta.db_table,
        followee=Followee._meta.db_table,
        state=TimelineState._meta.db_table,
    )
    with connection.cursor() as db:
        db.execute(sql, {"reader": reader_id})
        row = db.fetchone()
    if row is None or row[0] is None:
        return None
    return row[1] or 0, bool(row[2])


def home_feed(*, reader: User, cursor: Cursor, limit: int | None = None) -> Page[FeedItem]:
    """One page of the reader's home feed, newest first."""
    check_key_cursor(cursor)
    limit = page_size(limit)
    state = _reader_state(reader.pk)
    if state is None:
        services.rebuild(owner_id=reader.pk)
        state = _reader_state(reader.pk)
    generation, any_pulled = state
    pulled = []
    if any_pulled:
        followees = Followee.objects.filter(user_id=reader.pk).values("followee_id")
        pulled = list(
            PullAuthor.objects.filter(
                Q(author_id__in=followees) | Q(author_id=reader.pk)
            ).values_list("author_id", flat=True)
        )
    inbox = _Inbox(reader.pk, generation)
    notices: list[str] = []
    items: list[FeedItem] = []
    window = cursor
    # Keys are read WINDOW_FACTOR times wider than the page: the feed drops
    # some (a post shown at a newer repost, a deletion or an unfollow not yet
    # cleaned out), and the entries query keeps only the page's worth.
    size = WINDOW_FACTOR * (limit + 1)
    for _ in range(MAX_WINDOWS):
        keys = _window(
            reader_id=reader.pk,
            inbox=inbox,
            pulled=pulled,
            cursor=window,
            limit=size,
            notices=notices,
        )
        items += hydrate(
            keys,
            reader_id=reader.pk,
            limit=limit + 1 - len(items),
            ascending=cursor.newer_pages,
        )
        if len(items) > limit or len(keys) < size:
            break
        # More than the page's worth of keys were dropped: read on, wider.
        window = Cursor(after=keys[-1]) if cursor.newer_pages else Cursor(before=keys[-1])
        size *= 2
    page = make_page(items, cursor=cursor, limit=limit, key=lambda item: item.key)
    page.notices = notices
    return page


NEW_ENTRIES_CAP = 99


def new_entries_count(*, reader_id: int, after: str) -> int:
    """About how many entries arrived above ``after``: the "N new posts" notice.

    One sorted-set count in Redis, or one bounded index scan of the inbox,
    never a feed computation: thousands of open tabs poll this (seed 002's
    query storm). It counts inbox entries, so posts of big accounts (pulled at
    read time) show up on the next load rather than in the notice.
    """
    generation = cache.generation()
    count = CachedInbox(reader_id, generation).count_newer(after, NEW_ENTRIES_CAP)
    if count is not None:
        return count
    return InboxEntry.objects.filter(owner_id=reader_id, timeline_key__gt=after)[
        :NEW_ENTRIES_CAP
    ].count()
