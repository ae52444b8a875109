"""Quote posts (a repost with a comment, Weibo's 转发): what a quote shows embedded.

A quote is a post of its own (``Post.quote_of`` set, text required), delivered
like any post and never collapsed with reposts. Its page shows the quoted
post as it is now (edits included), or "post unavailable" when the reader
may not see it: deleted, hidden, or by someone blocked either way.

Lists load the quoted posts of a whole page in one query (``attach``, called
by ``posts.selectors.viewer_marks``); a post rendered without it loads its own
(``quoted_of``), which the pages' query-count tests would catch.
"""

from collections.abc import Iterable

from posts.models import Post
from posts.visibility import OPEN, visible_to

_QUOTED = "_quoted_post"  # where a post keeps what it quotes, as its reader may see it


def attach(posts: Iterable[Post], *, viewer_id: int | None) -> None:
    """Load what these posts quote, as the viewer may see it: one query, none without quotes."""
    quoting = [post for post in posts if post.quote_of_id and not hasattr(post, _QUOTED)]
    if not quoting:
        return
    quoted = Post.objects.visible().with_ids({post.quote_of_id for post in quoting})
    # Only public and unlisted posts may be quoted: no other shows embedded.
    shown = visible_to(quoted.filter(visibility__in=OPEN), viewer_id).select_related("author")
    found = {post.pk: post for post in shown}
    for post in quoting:
        setattr(post, _QUOTED, found.get(post.quote_of_id))


def quoted_of(post: Post, *, viewer_id: int | None) -> Post | None:
    """What ``post`` quotes, or None when the viewer may not see it ("post unavailable")."""
    if not hasattr(post, _QUOTED):
        attach([post], viewer_id=viewer_id)
    return getattr(post, _QUOTED, None)
