"""The pull model of DESIGN.md, written as plainly as possible: the oracle.

Every delivery path (push, pull, caches, rebuilds, collapsing reposts) is
tested against it (tests/timelines/test_feed_invariant.py). It uses the same
visibility rule as the engine (``posts.visibility.in_home_feed``), in its ORM
dialect, and nothing else of the engine.
"""

from feed_project.pagination import Cursor
from posts import visibility
from posts.models import Post


def pull_reference_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """Timeline keys of the reader's feed by the pull model, in scan order.

    Entries are the live posts and reposts the feed rule lets the reader see
    (by the accounts they follow now and their own, less muted authors and
    reposts of originals gone, hidden, muted or blocked either way). A post
    and its reposts collapse to one item at the newest of them.
    """
    entries = Post.objects.filter(visibility.in_home_feed(reader_id)).values_list(
        "timeline_key", "repost_of_id", "id"
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
