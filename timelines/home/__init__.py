"""The home feed's owner: all that the rest of the project may do to, or ask of, a
reader's home feed (as Mastodon's FeedManager owns a feed's key, filter, push,
unpush, merge, populate and trim).

Only this package touches the inbox tables (``InboxEntry``, ``InboxState``,
``CacheGeneration``), the Redis cache and its scripts; its modules whose names
start with ``_`` are its own (an import-linter contract keeps everyone else
out). What it offers:

- **read** a page, newest first, both ways (``home_feed``), and count what is
  newer than a key (``new_entries_count``);
- **deliver** a new post to a range of its author's followers, the fan-out
  chunk's one statement (``deliver_to_followers``), and to its author
  (``deliver_own``); ``delivered`` is sent each time, the hook live delivery
  attaches to; take a deleted post back out (``withdraw``,
  ``withdraw_from_followers``);
- **follow changes**: bring an author's posts in, or take them out, as the
  graph stands when it runs (``sync_author``);
- **rebuild** an inbox by pull (``rebuild``), **trim** kept inboxes to the cap
  and release those of readers away (``sweep_batch``);
- **verify** an inbox against the pull model and repair it (``verify``,
  ``sample_kept``); the pull model itself is ``timelines.home.pull_model``;
- **erase** what an erased account leaves in inboxes (``erase``).

docs/ARCHITECTURE.md ("Reading a feed", "Delivering a post") says how the
parts fit, and what each inbox change may race with.
"""

from timelines.home._delivery import (
    deliver_own,
    deliver_to_followers,
    delivered,
    withdraw,
    withdraw_from_followers,
)
from timelines.home._erasure import erase
from timelines.home._inbox import built_reader_ids, rebuild, sync_author
from timelines.home._items import FeedItem
from timelines.home._page import PULL_FAILED_NOTICE, home_feed, new_entries_count, page_size
from timelines.home._trim import active_since, away, cap, sweep_batch
from timelines.home._verify import Verified, sample_kept, verify

__all__ = [
    "PULL_FAILED_NOTICE",
    "FeedItem",
    "Verified",
    "active_since",
    "away",
    "built_reader_ids",
    "cap",
    "deliver_own",
    "deliver_to_followers",
    "delivered",
    "erase",
    "home_feed",
    "new_entries_count",
    "page_size",
    "rebuild",
    "sample_kept",
    "sweep_batch",
    "sync_author",
    "verify",
    "withdraw",
    "withdraw_from_followers",
]
