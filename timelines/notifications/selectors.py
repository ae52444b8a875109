"""Reading notifications: one page of a user's, newest first."""

from accounts.models import User
from feed_project.pagination import Cursor, Page, keyset_page
from posts.models import Post
from posts.visibility import readable_among, visible_to
from timelines.notifications.models import Notification

_POST = Notification._meta.get_field("post")


def is_cursor(value: str) -> bool:
    """A notifications cursor is a row id."""
    return value.isascii() and value.isdigit() and len(value) < 19


def notifications_page(*, user: User, cursor: Cursor, limit: int = 30) -> Page[Notification]:
    """One page of ``user``'s notifications, newest first, keyset on id.

    Notifications from people blocked either way are left out; the actors and
    the posts come after the page (two queries routed by their shard keys:
    they live on other users' shards, not the recipient's).
    """
    rows = visible_to(Notification.objects.filter(recipient_id=user.pk), user.pk, "actor_id")
    page = keyset_page(rows, field="id", cursor=cursor, limit=limit, parse=int)
    actors = User.objects.in_bulk({note.actor_id for note in page.items})
    posts = Post.objects.with_ids({note.post_id for note in page.items if note.post_id}).in_bulk()
    posts = readable_among(user.pk, posts)
    for note in page.items:
        note.actor = actors[note.actor_id]
        # The post may be erased for good: the row keeps its id, the page says so.
        _POST.set_cached_value(note, posts.get(note.post_id))
    return page
