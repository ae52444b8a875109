"""Writing notifications: someone followed you, replied to you, liked, reposted or mentioned you.

``notify`` is the one way in: it inserts ignoring duplicates (the unique
constraint ``one_notification_per_event``, so a retried task or a like,
unlike, like again notifies once) and bumps ``User.unread_notifications``
only when a row went in. Nobody is notified of their own doing, nor of the
doing of someone blocked either way or muted by them (the page hides what
came before the mute).

The counter is what the site's badge and the API's unread count show: each
way out of "unread" (mark all read, read up to a point, dismiss one, clear
all) takes the user's row lock first and keeps it right in the same
transaction.
"""

from collections.abc import Collection

from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from feed_project.refusals import NotFound
from posts import ids
from posts.mentions import mentioned_usernames
from posts.models import Like, Post
from posts.visibility import may_see
from relations.models import Follower
from relations.visibility import is_blocked_either_way, is_muted
from timelines.notifications.models import Notification
from timelines.suggestions import contacts

Kind = Notification.Kind


def notify(
    *, recipient_id: int, kind: str, actor_id: int, post_id: str | None = None, edit: int = 0
) -> bool:
    """Notify ``recipient_id`` of ``kind`` by ``actor_id``; False when nothing was written.

    ``edit``: for an "edited" notification, the version the edit replaced.
    """
    if recipient_id == actor_id or is_blocked_either_way(recipient_id, actor_id):
        return False
    if is_muted(recipient_id, actor_id):
        return False
    table = Notification._meta.db_table
    with transaction.atomic():
        # SQLite: Django leaves out a NULLS NOT DISTINCT constraint there, so
        # duplicates are checked by hand. SQLite runs one writer at a time,
        # so the check holds.
        by_hand = not connection.features.supports_nulls_distinct_unique_constraints
        if (
            by_hand
            and Notification.objects.filter(
                recipient_id=recipient_id, kind=kind, actor_id=actor_id, post_id=post_id, edit=edit
            ).exists()
        ):
            return False
        with connection.cursor() as db:
            db.execute(
                f"INSERT INTO {table} (recipient_id, kind, actor_id, post_id, edit, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [recipient_id, kind, actor_id, post_id, edit, timezone.now()],
            )
            inserted = db.rowcount == 1
        if inserted:
            User.objects.filter(pk=recipient_id).update(
                unread_notifications=F("unread_notifications") + 1
            )
            # Once per event, as the notification: a reply, like, repost or quote
            # brings the two closer (seed 003's contact degree, never shown).
            contacts.raise_for(kind, actor_id, recipient_id)
    return inserted


def notify_about_post(*, post_id: str) -> int:
    """The notifications a new post makes: a reply, a repost, its @mentions. How many."""
    post = Post.objects.visible().with_id(post_id).first()
    if post is None:
        return 0
    sent = 0
    replied_to = None
    # The recipients are the ids' authors (posts.ids): no need to read the posts
    # replied to or reposted, which live on other shards.
    if post.in_reply_to_id is not None and _may_read(post.in_reply_to_id, post):
        replied_to = ids.author_of_post_id(post.in_reply_to_id)
        sent += notify(
            recipient_id=replied_to,
            kind=Kind.REPLY,
            actor_id=post.author_id,
            post_id=post.pk,
        )
    if post.repost_of_id is not None:
        sent += notify(
            recipient_id=ids.author_of_post_id(post.repost_of_id),
            kind=Kind.REPOST,
            actor_id=post.author_id,
            post_id=post.repost_of_id,
        )
    if post.quote_of_id is not None:
        sent += notify(
            recipient_id=ids.author_of_post_id(post.quote_of_id),
            kind=Kind.QUOTE,
            actor_id=post.author_id,
            post_id=post.pk,
        )
    if post.repost_of_id is None:
        sent += _notify_watchers(post)
    names = mentioned_usernames(post.text)
    if names:
        mentioned = User.objects.filter(
            pk__in=unique_names.user_ids_named(names).values(), is_active=True
        )
        for user_id in mentioned.values_list("pk", flat=True):
            # A reply names its parent's author (apps write the @name in): the reply's
            # notification tells them, one for the post, as on Mastodon.
            if user_id == replied_to or not may_see(user_id, post):
                continue
            sent += notify(
                recipient_id=user_id, kind=Kind.MENTION, actor_id=post.author_id, post_id=post.pk
            )
    return sent


def _notify_watchers(post: Post) -> int:
    """A "post" notification to the followers who asked for one (and may read it): the
    author's Follower rows, one range on the author's shard."""
    watchers = Follower.objects.filter(user_id=post.author_id, notify_posts=True)
    return sum(
        notify(recipient_id=watcher, kind=Kind.POST, actor_id=post.author_id, post_id=post.pk)
        for watcher in watchers.values_list("follower_id", flat=True)
        if may_see(watcher, post)
    )


def _may_read(parent_id: str, reply: Post) -> bool:
    """Whether the author of the post replied to may read the reply (its level)."""
    return may_see(ids.author_of_post_id(parent_id), reply)


def engaged_with(post: Post) -> set[int]:
    """Who replied to, liked or reposted ``post`` (live replies and reposts).

    Run by a task, never a page: replies and reposts are by many authors and
    likes are keyed by the liker, so each is one statement over every shard
    (post_replies_idx, post_reposts_idx, the likes' post index).
    """
    people = set(
        Post.objects.visible()
        .filter(Q(in_reply_to_id=post.pk) | Q(repost_of_id=post.pk))
        .values_list("author_id", flat=True)
    )
    people.update(Like.objects.filter(post_id=post.pk).values_list("user_id", flat=True))
    return people


def notify_edited(*, post_id: str, version: int) -> int:
    """An "edited" notification to everyone who replied, liked or reposted: once per edit."""
    post = Post.objects.visible().with_id(post_id).first()
    if post is None:
        return 0
    return sum(
        notify(
            recipient_id=person,
            kind=Kind.EDITED,
            actor_id=post.author_id,
            post_id=post.pk,
            edit=version,
        )
        for person in sorted(engaged_with(post))
    )


def mark_all_read(*, user: User) -> int:
    """Mark every unread notification of ``user`` read and reset the counter."""
    with transaction.atomic():
        _lock_counter(user)
        marked = Notification.objects.filter(recipient_id=user.pk, read_at__isnull=True).update(
            read_at=timezone.now()
        )
        User.objects.filter(pk=user.pk).update(unread_notifications=0)
    return marked


def _lock_counter(user: User) -> None:
    """The user row first: a notify() committing meanwhile waits here, and its row and
    its +1 both land after this change."""
    User.objects.select_for_update(no_key=True).filter(pk=user.pk).values("pk").get()


def mark_read_up_to(*, user: User, notification_id: int) -> int:
    """Mark ``user``'s unread notifications up to ``notification_id`` (a client's read
    position) read, and take them off the counter: how many."""
    with transaction.atomic():
        _lock_counter(user)
        marked = Notification.objects.filter(
            recipient_id=user.pk, read_at__isnull=True, id__lte=notification_id
        ).update(read_at=timezone.now())
        if marked:
            User.objects.filter(pk=user.pk).update(
                unread_notifications=Greatest(F("unread_notifications") - marked, 0)
            )
    return marked


def dismiss(*, user: User, notification_ids: Collection[int]) -> int:
    """Delete these notifications of ``user`` (the unread ones off the counter): how
    many; NotFound when none of them is theirs."""
    with transaction.atomic():
        _lock_counter(user)
        rows = Notification.objects.filter(recipient_id=user.pk, pk__in=list(notification_ids))
        unread = rows.filter(read_at__isnull=True).count()
        deleted, _ = rows.delete()
        if not deleted:
            raise NotFound("Record not found")
        if unread:
            User.objects.filter(pk=user.pk).update(
                unread_notifications=Greatest(F("unread_notifications") - unread, 0)
            )
    return deleted


def clear_all(*, user: User) -> int:
    """Delete every notification of ``user`` and reset the counter: how many."""
    with transaction.atomic():
        _lock_counter(user)
        deleted, _ = Notification.objects.filter(recipient_id=user.pk).delete()
        User.objects.filter(pk=user.pk).update(unread_notifications=0)
    return deleted
