"""The pull model, written as plainly as possible: the oracle every home feed must equal.

What it encodes (all through the one rule, ``posts.visibility.in_home_feed``):
the follows of the reader now (a locked account's pending requests are no
follow: only accepted ones are ``Followee`` rows), each post's level (a
followers-only post is for those follows, a direct one only for its author
and the people it addresses), mutes and blocks.

Every delivery path (push, pull, caches, rebuilds, collapsing reposts) is
tested against it (tests/timelines/test_feed_invariant.py). It uses the same
visibility rule as the engine (``posts.visibility.in_home_feed``), in its ORM
dialect, and nothing else of the engine. On a Citus cluster, whose shards
cannot answer that dialect's joins, it reads the posts of the reader and
everyone they follow and checks the rule in its set dialect (held equal to
the ORM's by tests/posts/test_visibility.py). Quote posts are posts (never
collapsed); ``reference_item`` says what an entry shows: the current text,
and the quoted post or "unavailable".
"""

from dataclasses import replace

from django.db import connection

from feed_project import sharding
from feed_project.pagination import Cursor
from posts import ids, visibility
from posts.models import Post
from relations.visibility import blocked_among, standing


def _entries_on_a_cluster(
    reader_id: int, *, after: str | None
) -> list[tuple[str, str | None, str]]:
    reader = standing(reader_id)
    posts = Post.objects.filter(author_id__in={reader_id, *reader.followed})
    if after is not None:
        posts = posts.filter(timeline_key__gt=after)
    posts = list(posts)
    originals = {
        post.pk: post
        for post in Post.objects.with_ids({p.repost_of_id for p in posts if p.repost_of_id})
    }
    blocked = blocked_among(reader_id, {o.author_id for o in originals.values()})
    reader = replace(reader, blocked=frozenset(blocked))
    return [
        (post.timeline_key, post.repost_of_id, post.pk)
        for post in posts
        if visibility.shown_in_home_feed(reader, post, originals.get(post.repost_of_id))
    ]


def pull_reference_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """Timeline keys of the reader's feed by the pull model, in scan order.

    Entries are the live posts and reposts the feed rule lets the reader see
    (by the accounts they follow now and their own, less muted authors and
    reposts of originals gone, hidden, muted or blocked either way). A post
    and its reposts collapse to one item at the newest of them.
    """
    # An item's key is the newest of its post's and reposts' keys, so the items above
    # ``after`` come from the rows above it alone.
    if sharding.on_citus(connection):
        entries = _entries_on_a_cluster(reader_id, after=cursor.after)
    else:
        posts = Post.objects.filter(visibility.in_home_feed(reader_id))
        if cursor.after is not None:
            posts = posts.filter(timeline_key__gt=cursor.after)
        entries = posts.values_list("timeline_key", "repost_of_id", "id")
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


UNAVAILABLE = "unavailable"


def reference_item(*, reader_id: int, key: str) -> tuple[str, str, str | None]:
    """What the feed shows at ``key``, plainly: the post shown (a repost's original),
    its text now (edits show at once), and what it quotes as the reader may see it:
    the quoted post's id, UNAVAILABLE (deleted, hidden, blocked either way), or None."""
    # Each post by its own id (and so its author's shard on Citus): not a join
    # from a repost to its original, which may be on another shard.
    entry = Post.objects.with_id(ids.timeline_key_to_post_id(key)).get()
    shown = Post.objects.with_id(entry.repost_of_id).get() if entry.repost_of_id else entry
    quoted = None
    if shown.quote_of_id:
        seen = visibility.visible_to(
            Post.objects.visible()
            .with_id(shown.quote_of_id)
            .filter(visibility__in=visibility.OPEN),
            reader_id,
        ).exists()
        quoted = shown.quote_of_id if seen else UNAVAILABLE
    return shown.pk, shown.text, quoted
