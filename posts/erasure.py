"""posts' part of deleting an account (accounts.deletion): hide, show again, erase.

During the grace period the account's visible posts are hidden with the
reason ``deletion`` (every list reads visible posts only, so they leave
every feed at once); logging in shows them again. At erasure:

- likes the user gave, with the liked posts' ``like_count``;
- likes the user's posts received (rows on the likers' shards);
- the user's live reposts and replies, with the originals' and parents'
  counters; other people's reposts of the user's posts are deleted as their
  authors would delete them (``services.delete_post``: their counters, and
  their followers' inboxes), and every repost or reply pointing at the
  user's posts forgets it, and so does every quote of them;
- the tags and earlier versions (edits) of the user's posts;
- reports by, against or about the user (the moderation log records what
  was done about them);
- moderation logs keep the username as text, their keys to the user and
  the user's posts emptied;
- the posts' images: rows marked discarded here, files and rows deleted by
  ``posts.tasks`` once the erasure commits;
- the posts themselves, one primary-key range of the author's shard.

The statements that find rows of other people by the user (reposts and
replies of the user's posts, likes received, reports, logs) run across
shards: the few erasure queries docs/SCALING.md lists.
"""

from collections import Counter
from typing import Any

from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

from posts import ids, media, services, tasks
from posts.models import Like, ModerationLog, Post, PostEdit, PostTag, Report


def hide_for_deletion(*, user_id: int) -> int:
    return (
        Post.objects.by_author(user_id)
        .visible()
        .update(hidden_at=timezone.now(), hidden_reason=Post.HiddenReason.DELETION)
    )


def show_again(*, user_id: int) -> int:
    return (
        Post.objects.by_author(user_id)
        .filter(hidden_reason=Post.HiddenReason.DELETION, deleted_at__isnull=True)
        .update(hidden_at=None, hidden_reason="")
    )


def _decrement(field: str, counts: Counter[str]) -> None:
    for post_id, n in counts.items():
        Post.objects.with_id(post_id).update(**{field: F(field) - n})


def erase_posts(*, user_id: int, username: str) -> None:
    low, high = ids.post_id_range(user_id)
    own = list(
        Post.objects.by_author(user_id).values_list(
            "pk", "repost_of_id", "in_reply_to_id", "deleted_at"
        )
    )
    own_ids = [row[0] for row in own]
    mine = set(own_ids)

    liked = list(Like.objects.filter(user_id=user_id).values_list("post_id", flat=True))
    Like.objects.filter(user_id=user_id).delete()
    _decrement("like_count", Counter(p for p in liked if p not in mine))
    Like.objects.filter(post_id__gte=low, post_id__lt=high).delete()

    live = [row for row in own if row[3] is None]
    _decrement("repost_count", Counter(r[1] for r in live if r[1] and r[1] not in mine))
    _decrement("reply_count", Counter(r[2] for r in live if r[2] and r[2] not in mine))

    if own_ids:
        theirs = Post.objects.filter(repost_of_id__in=own_ids).exclude(author_id=user_id)
        for repost in theirs.filter(deleted_at__isnull=True):
            services.delete_post(post=repost)
        theirs.update(repost_of=None)
        replies = Post.objects.filter(in_reply_to_id__in=own_ids).exclude(author_id=user_id)
        replies.update(in_reply_to=None)
        # Quotes of the user's posts stay (their authors' words), quoting nothing now.
        quotes = Post.objects.filter(quote_of_id__in=own_ids).exclude(author_id=user_id)
        quotes.update(quote_of=None)
    # Tags and earlier versions of the user's posts: rows of the user's shard.
    PostTag.objects.filter(author_id=user_id).delete()
    PostEdit.objects.filter(author_id=user_id).delete()

    about = Q(post_id__gte=low, post_id__lt=high)
    Report.objects.filter(Q(reporter_id=user_id) | Q(user_id=user_id) | about).delete()
    ModerationLog.objects.filter(user_id=user_id).update(user=None, username=username)
    ModerationLog.objects.filter(moderator_id=user_id).update(
        moderator=None, moderator_username=username
    )
    ModerationLog.objects.filter(about).update(post=None)

    if media.discard_all(author_id=user_id):
        tasks.delete_files_on_commit(author_id=user_id)

    # Raw: Django's delete would visit every table pointing at posts, rows
    # the steps above (and timelines.erasure) handle in their own way.
    with connection.cursor() as db:
        db.execute(
            f"DELETE FROM {Post._meta.db_table} WHERE author_id = %s AND id >= %s AND id < %s",
            [user_id, low, high],
        )


def on_account_deactivated(sender: Any, user_id: int, **kwargs: Any) -> None:
    hide_for_deletion(user_id=user_id)


def on_account_reactivated(sender: Any, user_id: int, **kwargs: Any) -> None:
    show_again(user_id=user_id)


def on_account_erasing(sender: Any, user_id: int, username: str, **kwargs: Any) -> None:
    erase_posts(user_id=user_id, username=username)
