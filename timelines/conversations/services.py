"""Delivering private messages (direct posts) and marking conversations read.

``deliver`` runs in a task recorded in the outbox with the post (so a lost
message is swept, never lost) and is idempotent: a participant's message row
is keyed by the post's timeline key, and a conversation turns unread (and the
participant's ``unread_conversations`` counter goes up) only when its newest
message changes to one by someone else. ``hide`` takes one off a person's list
(the client API's delete).
"""

from django.db import transaction
from django.db.models import F

from accounts.models import User
from feed_project.refusals import NotFound
from posts.models import Post, Visibility
from relations.visibility import blocked_among
from timelines.conversations.models import Conversation, ConversationMessage


def key_of(user_ids) -> str:
    """A conversation's key: its participants' ids, sorted, dot-separated."""
    return ".".join(str(user_id) for user_id in sorted(set(user_ids)))


def participants_of(post: Post) -> list[int]:
    """The author and the people a direct post addresses, less those blocked either way
    with the author (a block ends the conversation for both)."""
    readers = set(post.recipient_ids)
    readers -= blocked_among(post.author_id, readers)
    return sorted({post.author_id, *readers})


def deliver(*, post_id: str) -> int:
    """Write a direct post into each participant's copy of its conversation: how many."""
    post = Post.objects.visible().with_id(post_id).first()
    if post is None or post.visibility != Visibility.DIRECT:
        return 0
    people = participants_of(post)
    if len(people) < 2:
        return 0
    key = key_of(people)
    for user_id in people:
        _deliver_to(user_id, key, post)
    return len(people)


def _deliver_to(user_id: int, key: str, post: Post) -> None:
    with transaction.atomic():
        _, new = ConversationMessage.objects.get_or_create(
            user_id=user_id, key=key, timeline_key=post.timeline_key
        )
        if not new:
            return
        unread = user_id != post.author_id
        conversation, created = Conversation.objects.select_for_update().get_or_create(
            user_id=user_id,
            key=key,
            defaults={"last_key": post.timeline_key, "unread": unread},
        )
        was_unread = False if created else conversation.unread
        if not created and post.timeline_key > conversation.last_key:
            conversation.last_key = post.timeline_key
            conversation.unread = unread
            conversation.save(update_fields=["last_key", "unread"])
        now_unread = conversation.unread if not created else unread
        if now_unread != was_unread:
            change = 1 if now_unread else -1
            User.objects.filter(pk=user_id).update(
                unread_conversations=F("unread_conversations") + change
            )


def mark_read(*, user: User, key: str) -> bool:
    """Mark one of ``user``'s conversations read; False when it was not unread."""
    with transaction.atomic():
        marked = Conversation.objects.filter(user_id=user.pk, key=key, unread=True).update(
            unread=False
        )
        if marked:
            User.objects.filter(pk=user.pk, unread_conversations__gt=0).update(
                unread_conversations=F("unread_conversations") - 1
            )
    return bool(marked)


def hide(*, user: User, key: str) -> None:
    """Take a conversation off ``user``'s list: their copy and its messages go (off the
    counter if it was unread); the others' copies stay, and a new message starts a new
    copy. NotFound when ``user`` has none."""
    with transaction.atomic():
        found = Conversation.objects.filter(user_id=user.pk, key=key)
        unread = found.values_list("unread", flat=True).first()
        if unread is None:
            raise NotFound("Record not found")
        ConversationMessage.objects.filter(user_id=user.pk, key=key).delete()
        found.delete()
        if unread:
            User.objects.filter(pk=user.pk, unread_conversations__gt=0).update(
                unread_conversations=F("unread_conversations") - 1
            )
