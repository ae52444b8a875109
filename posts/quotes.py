"""Quote posts (a repost with a comment, Weibo's 转发): what a quote shows embedded.

A quote is a post of its own (``Post.quote_of`` set, text required), delivered
like any post and never collapsed with reposts. Its page shows the quoted
post as it is now (edits included), or "post unavailable" when the reader
may not see it: deleted, hidden, or by someone blocked either way.

Lists load the quoted posts of a whole page in one query (``quoted_posts``,
called by ``posts.selectors.viewer_marks``) and hand them to each post's
rendering beside the post: what a reader may see is never kept on the post,
which a feed shares with every reader (``timelines.home._held_posts``). A post rendered
without them loads its own, which the pages' query-count tests would catch.
"""

from collections.abc import Iterable

from posts.models import Post
from posts.visibility import OPEN, visible_to


def quoted_posts(posts: Iterable[Post], *, viewer_id: int | None) -> dict[str, Post | None]:
    """What these posts quote, by the quoted post's id, as the viewer may see it (None:
    "post unavailable"): one query, none without quotes."""
    quoted_ids = {post.quote_of_id for post in posts if post.quote_of_id}
    if not quoted_ids:
        return {}
    quoted = Post.objects.visible().with_ids(quoted_ids)
    # Only public and unlisted posts may be quoted: no other shows embedded.
    shown = visible_to(quoted.filter(visibility__in=OPEN), viewer_id).select_related("author")
    found: dict[str, Post | None] = dict.fromkeys(quoted_ids)
    found.update((post.pk, post) for post in shown)
    return found
