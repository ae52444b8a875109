"""posts' part of a data export (accounts.archive): the person's posts with their images,
and what they liked.

Posts are the author's live ones (deleted posts are gone; hidden ones are
still theirs), read in keyset batches of the author's primary-key range,
each batch's images in one query by (author, post). An image is in the zip
as ``media/<post id>-<n>.<ext>``, the path the post's ``media`` column
names. Likes are read by the liker (their shard), the liked posts' authors
by primary key.
"""

from collections.abc import Iterator
from pathlib import PurePosixPath

from django.db.models import QuerySet

from accounts import archive
from accounts.models import User
from posts import ids
from posts.models import Like, Post, PostMedia

# Rows read per round trip.
BATCH = 500

POST_COLUMNS = (
    "id",
    "created_at",
    "text",
    "spoiler_text",
    "in_reply_to",
    "repost_of",
    "quote_of",
    "edited_at",
    "hidden",
    "reply_count",
    "like_count",
    "repost_count",
    "media",
    "media_alt",
)


def archive_path(item: PostMedia) -> str:
    suffix = PurePosixPath(item.file).suffix
    return f"media/{item.post_id}-{item.position + 1}{suffix}"


def _live_media(author_id: int) -> QuerySet[PostMedia]:
    """A person's posts' images (an upload no post took yet is no post's: posts.uploads)."""
    return PostMedia.objects.filter(
        author_id=author_id, discarded_at__isnull=True, post__isnull=False
    )


def _posts(user_id: int) -> Iterator[archive.Row]:
    last = ""
    while True:
        batch = list(
            Post.objects.by_author(user_id)
            .filter(deleted_at__isnull=True, pk__gt=last)
            .order_by("pk")[:BATCH]
        )
        if not batch:
            return
        images: dict[str, list[PostMedia]] = {}
        for item in (
            _live_media(user_id)
            .filter(post_id__in=[p.pk for p in batch])
            .order_by("post_id", "position")
        ):
            images.setdefault(item.post_id, []).append(item)
        for post in batch:
            found = images.get(post.pk, [])
            yield {
                "id": post.pk,
                "created_at": post.created_at,
                "text": post.text,
                "spoiler_text": post.spoiler_text,
                "in_reply_to": post.in_reply_to_id,
                "repost_of": post.repost_of_id,
                "quote_of": post.quote_of_id,
                "edited_at": post.edited_at,
                "hidden": post.hidden_at is not None,
                "reply_count": post.reply_count,
                "like_count": post.like_count,
                "repost_count": post.repost_count,
                "media": [archive_path(item) for item in found],
                "media_alt": [item.alt_text for item in found],
            }
        last = batch[-1].pk


def _files(user_id: int) -> Iterator[tuple[str, str]]:
    last = 0
    while True:
        batch = list(_live_media(user_id).filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            return
        for item in batch:
            yield archive_path(item), item.file
        last = batch[-1].pk


def _likes(user_id: int) -> Iterator[archive.Row]:
    last = ""
    while True:
        batch = list(
            Like.objects.filter(user_id=user_id, post_id__gt=last)
            .order_by("post_id")
            .values_list("post_id", "created_at")[:BATCH]
        )
        if not batch:
            return
        authors = {ids.author_of_post_id(post_id) for post_id, _ in batch}
        names = dict(User.objects.filter(pk__in=authors).values_list("pk", "username"))
        for post_id, created_at in batch:
            author = names.get(ids.author_of_post_id(post_id), "")
            yield {"post_id": post_id, "author": author, "liked_at": created_at}
        last = batch[-1][0]


SECTIONS = [
    archive.Section(
        name="posts",
        columns=POST_COLUMNS,
        rows=_posts,
        count=lambda user_id: (
            Post.objects.by_author(user_id).filter(deleted_at__isnull=True).count()
        ),
        files=_files,
        file_count=lambda user_id: _live_media(user_id).count(),
    ),
    archive.Section(
        name="likes",
        columns=("post_id", "author", "liked_at"),
        rows=_likes,
        count=lambda user_id: Like.objects.filter(user_id=user_id).count(),
    ),
]
