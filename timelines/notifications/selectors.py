"""Reading notifications: one page of a user's, newest first, and one notification.

The notifications page and the client API read through here, so both hide
the same ones: from people blocked either way or muted, about a post with a
muted word; a post the reader may no longer read (its level, deleted, hidden)
shows as gone (``post`` None).
The API's filters (kinds, an actor, a post, a time range) narrow the same scan.
"""

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from accounts.models import User
from feed_project.pagination import Cursor, Page, make_page
from feed_project.refusals import NotFound
from posts.models import Post
from posts.visibility import readable_among, visible_to
from relations.visibility import muted as muted_people
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
    user's muted words; a post the user may not read (its level, deleted, hidden by a
    moderator) shows as gone."""
    actors = User.objects.in_bulk({note.actor_id for note in notes})
    wanted = {note.post_id for note in notes if note.post_id}
    found = list(
        Post.objects.visible()
        .with_ids(wanted)
        .annotate(muted=muted_words_match(user.pk, "text", "spoiler_text"))
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


@dataclass(frozen=True)
class Only:
    """Which of a user's notifications a list keeps (None: any)."""

    kinds: Collection[str] | None = None
    actor_id: int | None = None
    post_id: str | None = None
    created_from: datetime | None = None
    created_before: datetime | None = None

    def narrow(self, rows):
        if self.kinds is not None:
            rows = rows.filter(kind__in=list(self.kinds))
        if self.actor_id is not None:
            rows = rows.filter(actor_id=self.actor_id)
        if self.post_id is not None:
            rows = rows.filter(post_id=self.post_id)
        if self.created_from is not None:
            rows = rows.filter(created_at__gte=self.created_from)
        if self.created_before is not None:
            rows = rows.filter(created_at__lt=self.created_before)
        return rows


ANY = Only()


def _visible_rows(user: User):
    """Less those from people blocked either way, or muted (as Mastodon hides them)."""
    rows = visible_to(Notification.objects.filter(recipient_id=user.pk), user.pk, "actor_id")
    return rows.exclude(muted_people(user.pk, "actor_id"))


def notifications_page(
    *, user: User, cursor: Cursor, limit: int = 30, only: Only = ANY
) -> Page[Notification]:
    """One page of ``user``'s notifications, newest first, keyset on id.

    Notifications from people blocked either way or muted are left out; so are
    those about a post with a muted word, and the page reads on to stay full.
    """
    rows = only.narrow(_visible_rows(user))
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


def notification_of(*, user: User, notification_id: int) -> Notification:
    """One of ``user``'s notifications as the page would show it; NotFound when it is not
    theirs, or the page hides it (blocked either way, a muted word)."""
    found = list(_visible_rows(user).filter(pk=notification_id)[:1])
    shown = _attach(user, found)
    if not shown:
        raise NotFound("Record not found")
    return shown[0]


def unread(*, user: User, only: Only = ANY, limit: int = 100) -> list[Notification]:
    """``user``'s unread notifications (newest first, at most ``limit``) that the page
    would list from its people: what an unread count counts."""
    rows = only.narrow(_visible_rows(user)).filter(read_at__isnull=True)
    fields = ("id", "kind", "actor_id", "post_id", "created_at")
    return list(rows.only(*fields).order_by("-id")[:limit])
