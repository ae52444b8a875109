"""Reading notifications: one page of a user's, newest first."""

from accounts.models import User
from feed_project.pagination import Cursor, Page, make_page
from posts.models import Post
from posts.visibility import readable_among, visible_to
from relations.visibility import muted_words_match
from timelines.notifications.models import Notification

_POST = Notification._meta.get_field("post")
# A page reads on past notifications about posts with a muted word at most this
# many times before it settles for what it has.
MAX_WINDOWS = 8


def is_cursor(value: str) -> bool:
    """A notifications cursor is a row id."""
    return value.isascii() and value.isdigit() and len(value) < 19


def _attach(user: User, notes: list[Notification]) -> list[Notification]:
    """The actors and posts of these notifications (two queries routed by their shard
    keys: they live on other users' shards), less those about a post with one of the
    user's muted words; a post the user may not read (its level) shows as gone."""
    actors = User.objects.in_bulk({note.actor_id for note in notes})
    wanted = {note.post_id for note in notes if note.post_id}
    found = list(
        Post.objects.with_ids(wanted).annotate(
            muted=muted_words_match(user.pk, "text", "spoiler_text")
        )
    )
    muted = {post.pk for post in found if post.muted}
    posts = readable_among(user.pk, {post.pk: post for post in found if not post.muted})
    shown = []
    for note in notes:
        if note.post_id and note.post_id in muted:
            continue
        note.actor = actors[note.actor_id]
        # The post may be erased for good: the row keeps its id, the page says so.
        _POST.set_cached_value(note, posts.get(note.post_id))
        shown.append(note)
    return shown


def notifications_page(*, user: User, cursor: Cursor, limit: int = 30) -> Page[Notification]:
    """One page of ``user``'s notifications, newest first, keyset on id.

    Notifications from people blocked either way are left out; so are those
    about a post with a muted word, and the page reads on to stay full.
    """
    rows = visible_to(Notification.objects.filter(recipient_id=user.pk), user.pk, "actor_id")
    if cursor.after is not None:
        rows = rows.filter(id__gt=int(cursor.after))
    if cursor.before is not None:
        rows = rows.filter(id__lt=int(cursor.before))
    rows = rows.order_by("id" if cursor.newer_pages else "-id")
    shown: list[Notification] = []
    for _ in range(MAX_WINDOWS):
        wanted = limit + 1 - len(shown)
        batch = list(rows[:wanted])
        shown += _attach(user, batch)
        if len(batch) < wanted or len(shown) > limit:
            break
        last = batch[-1].pk
        rows = rows.filter(id__gt=last) if cursor.newer_pages else rows.filter(id__lt=last)
    return make_page(shown, cursor=cursor, limit=limit, key=lambda note: str(note.pk))
