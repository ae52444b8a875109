"""Reading the home feed: inbox, plus big accounts pulled at read time, plus pull below
the inbox.

``home_feed`` is a page of it, newest first, one cursor page at a time (either
way); ``new_entries_count`` is the "N new posts" notice.
"""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, OperationalError

from accounts.models import User
from feed_project.pagination import Cursor, Page, make_page
from timelines.home import _items, _pull, _state
from timelines.home._inbox import Inbox
from timelines.home._items import FeedItem, hydrate
from timelines.home._state import NotBuilt, OpenInbox

logger = logging.getLogger(__name__)

PULL_FAILED_NOTICE = "Some posts from popular accounts may be missing; try again in a moment."
# A page reads keys WINDOW_FACTOR times its size; when even that many come
# back mostly dropped, it reads on, each window twice the last, at most
# MAX_WINDOWS times before it settles for what it has.
WINDOW_FACTOR = 3
MAX_WINDOWS = 8
NEW_ENTRIES_CAP = 99


def page_size(limit: int | None) -> int:
    if limit is None:
        return settings.FEED_PAGE_SIZE
    return max(1, min(limit, settings.FEED_MAX_PAGE_SIZE))


def first_window_size(limit: int) -> int:
    """Keys a page of ``limit`` reads first: WINDOW_FACTOR times the page and its one
    more (the feed drops some: a post shown at a newer repost, a deletion or an
    unfollow not yet cleaned out; the entries statement keeps only the page's worth)."""
    return WINDOW_FACTOR * (limit + 1)


def _window(
    *,
    reader_id: int,
    source: Inbox | NotBuilt,
    pulled: list[int],
    cursor: Cursor,
    limit: int,
    notices: list[str],
) -> list[str]:
    """``limit`` keys from the cursor on, in scan order, from every source."""
    if cursor.newer_pages:
        keys, covered = source.newer(cursor.after, limit)
        if not covered:  # the cursor is below the inbox: pull the whole window
            keys = _pull.reader_keys(reader_id=reader_id, cursor=cursor, limit=limit)
    else:
        keys = source.older(cursor.before, limit)
        reached_after = cursor.after is not None and bool(keys) and keys[-1] <= cursor.after
        if cursor.after is not None:
            keys = [key for key in keys if key > cursor.after]
        if len(keys) < limit and not reached_after:
            # Ran past the inbox's oldest entry: pull the rest.
            below = Cursor(before=keys[-1] if keys else cursor.before, after=cursor.after)
            keys += _pull.reader_keys(reader_id=reader_id, cursor=below, limit=limit - len(keys))
    if pulled:
        try:  # a pull that must never block the page (seed 002)
            extra = _pull.merged(
                pulled, cursor=cursor, limit=limit, timeout_ms=settings.FEED_PULL_TIMEOUT_MS
            )
        except DatabaseError:
            _pull_failed(notices)
        else:
            keys = sorted({*keys, *extra}, reverse=not cursor.newer_pages)[:limit]
    return keys


def _pull_failed(notices: list[str]) -> None:
    logger.exception("pull of big accounts failed")
    if PULL_FAILED_NOTICE not in notices:
        notices.append(PULL_FAILED_NOTICE)


@dataclass
class _Window:
    opened: OpenInbox
    keys: list[str]
    items: list[FeedItem]


def _stands(keys: list[str], items: list[FeedItem], *, size: int, limit: int, merged: bool) -> bool:
    """Whether a first window read from the cache's ``keys`` (and, when ``merged``,
    with pulled authors' posts merged in) shows the page. A window shorter than
    ``size`` ran past the inbox's oldest entry: what a pull would add lies below
    it, so the page must lie above it. A full window stands as a window does,
    unless posts were merged in: its keys past the cache's are not known here
    to read on from, so only a page stands."""
    if len(items) > limit and items[limit - 1].key >= keys[-1]:
        return True
    return not merged and len(keys) == size


def _first_window(
    reader: User, *, cursor: Cursor, size: int, limit: int, notices: list[str]
) -> _Window:
    """The inbox opened, and the first window's keys and items.

    Where it can, in two round trips instead of three to five: the cache read
    first, under the generation this process last saw, then the entries
    statement with the state statement as its prelude, which reads the entries
    only if the state bears out what the page assumed: the inbox built, the
    cache of that generation, and the pulled authors as this process last found
    them for the reader (their posts merged into the window by the statement,
    under the pull's time limit). If the window does not stand (``_stands``),
    or the state differs, the steps go one by one from the state read, the
    inbox read from kept if the state names its generation
    (``Inbox.cached_older`` remembers what it read).
    """
    opened = read = None
    guess = _state.seen_generation()
    if cursor.after is None and guess is not None and _items.follows_a_prelude():
        read = Inbox(reader.pk, generation=guess)
        keys = read.cached_older(cursor.before, size)
        if keys is not None and len(keys) > limit:  # fewer cannot show a page
            merge = _pull.WindowMerge.of(_state.pulled_seen(reader.pk), cursor=cursor, limit=size)
            try:
                states, items = _items.hydrate_after(
                    _state.state_prelude(
                        reader.pk, guess, pulled=merge.authors if merge else [], lowest=keys[-1]
                    ),
                    keys,
                    reader_id=reader.pk,
                    following=reader.following_count,
                    limit=limit + 1,
                    merge=merge,
                )
            except OperationalError:  # the merged pull ran out of time: read on without it
                _pull_failed(notices)
                opened = _state.open_built(reader.pk, following=reader.following_count, read=read)
                opened = OpenInbox(opened.inbox, pulled=[])
            else:
                opened = _state.opened_from(reader.pk, states, read=read)
                if items is not None and _stands(
                    keys, items, size=size, limit=limit, merged=merge is not None
                ):
                    assert opened is not None  # the prelude held: built
                    return _Window(opened, keys, items)
    if opened is None:
        opened = _state.open_built(reader.pk, following=reader.following_count, read=read)
    keys, items = _read(reader, opened, window=cursor, size=size, wanted=limit + 1, notices=notices)
    return _Window(opened, keys, items)


def _read(
    reader: User, opened: OpenInbox, *, window: Cursor, size: int, wanted: int, notices: list[str]
) -> tuple[list[str], list[FeedItem]]:
    """A window's ``size`` keys, and the first ``wanted`` items they show."""
    keys = _window(
        reader_id=reader.pk,
        source=opened.inbox,
        pulled=opened.pulled,
        cursor=window,
        limit=size,
        notices=notices,
    )
    # A window scans the way the page's cursor does (up for newer pages).
    items = hydrate(
        keys,
        reader_id=reader.pk,
        following=reader.following_count,
        limit=wanted,
        ascending=window.newer_pages,
    )
    return keys, items


def home_feed(*, reader: User, cursor: Cursor, limit: int | None = None) -> Page[FeedItem]:
    """One page of the reader's home feed, newest first.

    Its first step builds the reader's inbox when it is not built (a write,
    named as one: ``_state.open_built``); the rest reads.
    """
    limit = page_size(limit)
    notices: list[str] = []
    size = first_window_size(limit)
    first = _first_window(reader, cursor=cursor, size=size, limit=limit, notices=notices)
    keys, items = first.keys, first.items
    for _ in range(MAX_WINDOWS - 1):
        if len(items) > limit or len(keys) < size:
            break
        # More than the page's worth of keys were dropped: read on, wider.
        if cursor.newer_pages:
            window = Cursor(after=keys[-1])
        else:
            window = Cursor(before=keys[-1], after=cursor.after)
        size *= 2
        keys, more = _read(
            reader,
            first.opened,
            window=window,
            size=size,
            wanted=limit + 1 - len(items),
            notices=notices,
        )
        items += more
    page = make_page(items, cursor=cursor, limit=limit, key=lambda item: item.key)
    page.notices = notices
    return page


def new_entries_count(*, reader_id: int, after: str) -> int:
    """About how many entries arrived above ``after``: the "N new posts" notice.

    One script call to the Redis cache, or one bounded index scan of the inbox,
    never a feed computation: thousands of open tabs poll this (seed 002's
    query storm). It counts inbox entries, so posts of big accounts (pulled at
    read time) show up on the next load rather than in the notice.
    """
    return Inbox(reader_id).count_newer(after, NEW_ENTRIES_CAP)
