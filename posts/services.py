from collections.abc import Sequence

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from feed_project.refusals import Forbidden
from posts import ids, selectors, tags, tasks, uploads
from posts import media as post_media
from posts.mentions import existing_mentions, mentioned_usernames
from posts.models import STRICTNESS, Like, Post, PostTag, Visibility
from posts.signals import post_created, post_deleted, post_liked
from posts.visibility import recipients_field


def _publish(*, author: User, text: str = "", **fields: Post | str | None) -> Post:
    """Insert a post of ``author``; the caller holds the transaction.

    The counter UPDATE also locks the author's row, so two posts of one
    author take their ids one after the other (posts.ids.next_post_id).
    """
    User.objects.filter(pk=author.pk).update(posts_count=F("posts_count") + 1)
    last = Post.objects.by_author(author.pk).order_by("-pk").values_list("pk", flat=True)
    post_id = ids.next_post_id(author_id=author.pk, now=timezone.now(), last_post_id=last.first())
    post = Post.objects.create(
        id=post_id,
        timeline_key=ids.post_id_to_timeline_key(post_id),
        author=author,
        text=text,
        mentions=existing_mentions(text),
        **fields,
    )
    if "#" in text:
        tags.write_tags(post=post, new=True)
    post_created.send(
        sender=Post,
        post_id=post.pk,
        author_id=author.pk,
        in_reply_to_id=post.in_reply_to_id,
        repost_of_id=post.repost_of_id,
        visibility=post.visibility,
    )
    return post


def create_post(
    *,
    author: User,
    text: str,
    in_reply_to: Post | None = None,
    quote_of: Post | None = None,
    spoiler_text: str = "",
    media: Sequence[post_media.Prepared] = (),
    upload_ids: Sequence[int] = (),
    visibility: str = Visibility.PUBLIC,
) -> Post:
    """Publish a post (a reply when ``in_reply_to`` is given, a quote of ``quote_of``'s
    original when that is); followers get it on commit.

    ``visibility``: a reply takes its parent's level when that is stricter. A
    direct post addresses the people it mentions and, for a reply to a direct
    post, the parent's author and readers (a conversation). The caller checks
    that ``quote_of`` may be shared and seen (``quotable``, ``shareable``).

    ``media``: checked images (``posts.media.prepare_all``), whose files are
    written first and deleted again if the post's transaction fails.
    ``upload_ids``: images the author uploaded before (``posts.uploads.attachable``),
    after those; ``Refused`` if another post took one meanwhile, and nothing is written.
    """
    if quote_of is not None:
        quote_of = original_of(quote_of)
    stored = post_media.store(author_id=author.pk, images=media)
    try:
        with transaction.atomic():
            ancestry = in_reply_to.ancestry_of_reply() if in_reply_to is not None else ""
            visibility = level_of_reply(visibility, in_reply_to)
            post = _publish(
                author=author,
                text=text,
                in_reply_to=in_reply_to,
                quote_of=quote_of,
                ancestry=ancestry,
                spoiler_text=spoiler_text,
                visibility=visibility,
                recipients=_recipients(visibility, author=author, text=text, parent=in_reply_to),
            )
            if in_reply_to is not None:
                Post.objects.with_id(in_reply_to.pk).update(reply_count=F("reply_count") + 1)
            post_media.attach(post=post, stored=stored)
            uploads.attach(post=post, upload_ids=upload_ids, first_position=len(stored))
    except BaseException:
        post_media.delete_files(post_media.names_of(stored))  # never a file without its row
        raise
    return post


def level_of_reply(visibility: str, parent: Post | None) -> str:
    """A post's level: the one asked for, or its parent's when that is stricter."""
    if parent is not None and STRICTNESS[parent.visibility] > STRICTNESS[visibility]:
        return parent.visibility
    return visibility


def _recipients(visibility: str, *, author: User, text: str, parent: Post | None) -> str:
    """``Post.recipients`` of a new post: for a direct post, the people it mentions (and,
    answering a direct post, that post's author and readers), never the author."""
    if visibility != Visibility.DIRECT:
        return ""
    readers = set(unique_names.user_ids_named(mentioned_usernames(text)).values())
    if parent is not None and parent.visibility == Visibility.DIRECT:
        readers.update([parent.author_id, *parent.recipient_ids])
    readers.discard(author.pk)
    return recipients_field(readers)


def original_of(post: Post) -> Post:
    """What a repost reposts; a post is its own original."""
    return post.repost_of if post.repost_of_id else post


NOT_SHAREABLE = "Only public and unlisted posts can be reposted or quoted."
NOT_QUOTABLE = "Only public and unlisted posts can be quoted."
NO_QUOTE = "This post cannot be quoted: it is not there, or not for you."


class NotShareable(Forbidden):
    """Only public and unlisted posts may be reposted or quoted (``Post.may_be_shared``):
    sharing a followers-only or direct post would show it to people it is not for."""

    def __init__(self, message: str = NOT_SHAREABLE) -> None:
        super().__init__(message)


def shareable(post: Post, *, refusal: str = NOT_SHAREABLE) -> Post:
    """``post``'s original, if it may be reposted or quoted; else NotShareable(``refusal``)."""
    original = original_of(post)
    if not original.may_be_shared:
        raise NotShareable(refusal)
    return original


def quotable(*, viewer_id: int, post_id: str) -> Post:
    """The post a new post may quote (a repost's original): NotFound when the viewer
    may not see it (gone, hidden, blocked either way) or it is no post, NotShareable
    when it is followers-only or direct."""
    post = selectors.original_to_act_on(viewer_id=viewer_id, post_id=post_id, missing=NO_QUOTE)
    return shareable(post, refusal=NOT_QUOTABLE)


def repost(*, user: User, post: Post) -> Post:
    """Repost ``post`` (or what it reposts); reposting twice returns the first repost.

    Raises ``NotShareable`` for a followers-only or direct post.
    """
    original = shareable(post)
    with transaction.atomic():
        User.objects.select_for_update(no_key=True).filter(pk=user.pk).values("pk").get()
        existing = Post.objects.filter(
            author=user, repost_of=original, deleted_at__isnull=True
        ).first()
        if existing is not None:
            return existing
        # A repost is as open as what it shares (public or unlisted: the
        # caller checks ``may_be_shared``), so an unlisted post stays unlisted.
        shared = _publish(author=user, repost_of=original, visibility=original.visibility)
        Post.objects.with_id(original.pk).update(repost_count=F("repost_count") + 1)
    return shared


def undo_repost(*, user: User, post: Post) -> bool:
    """Take back ``user``'s repost of ``post``; False when there was none."""
    shared = Post.objects.filter(
        author=user, repost_of=original_of(post), deleted_at__isnull=True
    ).first()
    return shared is not None and delete_post(post=shared)


def delete_own_post(*, user: User, post_id: str) -> Post:
    """Delete ``user``'s live post ``post_id`` and return it: NotFound when it is not
    there, Forbidden when it is someone else's (only its author may take it back)."""
    post = selectors.live_post(post_id)
    if post.author_id != user.pk:
        raise Forbidden("Only the author can delete a post.")
    delete_post(post=post)
    return post


def delete_post(*, post: Post) -> bool:
    """Delete a post: its text is gone at once, feeds skip it from now on."""
    with transaction.atomic():
        deleted = (
            Post.objects.with_id(post.pk)
            .filter(deleted_at__isnull=True)
            .update(deleted_at=timezone.now(), text="")
        )
        if not deleted:
            return False
        User.objects.filter(pk=post.author_id).update(posts_count=F("posts_count") - 1)
        PostTag.objects.filter(author_id=post.author_id, post_id=post.pk).delete()
        if post.repost_of_id:
            Post.objects.with_id(post.repost_of_id).update(repost_count=F("repost_count") - 1)
        if post.in_reply_to_id:
            Post.objects.with_id(post.in_reply_to_id).update(reply_count=F("reply_count") - 1)
        if post_media.discard(post=post):
            tasks.delete_files_on_commit(author_id=post.author_id)
        post_deleted.send(sender=Post, post_id=post.pk, author_id=post.author_id)
    return True


def like(*, user: User, post: Post) -> bool:
    """``user`` likes ``post``; False when they already did.

    INSERT ... ON CONFLICT DO NOTHING: of two concurrent likes (a double
    click) the second waits on the primary key and inserts nothing, so the
    counter is bumped once, in the same transaction as the row.
    """
    table = Like._meta.db_table
    with transaction.atomic():
        with connection.cursor() as db:
            db.execute(
                f"INSERT INTO {table} (user_id, post_id, created_at) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                [user.pk, post.pk, timezone.now()],
            )
            inserted = db.rowcount == 1
        if inserted:
            Post.objects.with_id(post.pk).update(like_count=F("like_count") + 1)
            post_liked.send(sender=Post, post_id=post.pk, author_id=post.author_id, user_id=user.pk)
    return inserted


def unlike(*, user: User, post: Post) -> bool:
    """``user`` takes back their like of ``post``; False when there was none."""
    with transaction.atomic():
        deleted, _ = Like.objects.filter(user_id=user.pk, post_id=post.pk).delete()
        if deleted:
            Post.objects.with_id(post.pk).filter(like_count__gt=0).update(
                like_count=F("like_count") - 1
            )
    return bool(deleted)
