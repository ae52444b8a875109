"""The plain pull a Django developer would write for a home page, in its two usual
forms: the followees as a list of ids, or as a subquery. Neither is better
everywhere (on the 0.05% world the subquery form took page 1 in half the list
form's time: PostgreSQL walks the posts newest first, checking each author in a
hash of the reader's follows), so the benchmarks measure both and the best plain
query is the faster: the engine is held to the best plain alternative."""

from django.db.models import Q

from feed_project.pagination import Cursor
from posts.models import Post
from relations.models import Followee


def _page(posts, cursor: Cursor, limit: int) -> list[str]:
    if cursor.before is not None:
        posts = posts.filter(timeline_key__lt=cursor.before)
    return list(posts.order_by("-timeline_key").values_list("timeline_key", flat=True)[:limit])


def keys_by_list(authors: list[int], *, cursor: Cursor, limit: int) -> list[str]:
    """``Post.objects.visible().filter(author_id__in=authors)``, newest first."""
    return _page(Post.objects.visible().filter(author_id__in=authors), cursor, limit)


def keys_by_subquery(reader_id: int, *, cursor: Cursor, limit: int) -> list[str]:
    """The same with the reader's follows as a subquery, and the reader's own posts."""
    followed = Followee.objects.filter(user_id=reader_id).values("followee_id")
    posts = Post.objects.visible().filter(Q(author_id__in=followed) | Q(author_id=reader_id))
    return _page(posts, cursor, limit)
