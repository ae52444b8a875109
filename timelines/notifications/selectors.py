"""Reading notifications: one page of a user's, newest first."""

from accounts.models import User
from feed_project.pagination import Cursor, Page, keyset_page
from posts.visibility import visible_to
from timelines.notifications.models import Notification


def is_cursor(value: str) -> bool:
    """A notifications cursor is a row id."""
    return value.isascii() and value.isdigit() and len(value) < 19


def notifications_page(*, user: User, cursor: Cursor, limit: int = 30) -> Page[Notification]:
    """One page of ``user``'s notifications, newest first, keyset on id: one query.

    Notifications from people blocked either way are left out; the actor and
    the post come with each row.
    """
    rows = Notification.objects.filter(recipient_id=user.pk).select_related("actor", "post")
    rows = visible_to(rows, user.pk, "actor_id")
    return keyset_page(rows, field="id", cursor=cursor, limit=limit, parse=int)
