"""Images uploaded ahead of their post: Mastodon's clients upload first, then post
naming the images by id; the site's compose box sends them with the post.

An upload goes through the same pipeline as a post's image (``posts.media``:
checked by content, re-encoded, stored under a random name) and becomes a
``PostMedia`` row with no post and no position, its author's alone. A new post
that names it takes it (``attach``, in the post's transaction, by an UPDATE
that only an unattached, live row matches, so two posts naming one upload
cannot both take it). An upload no post named within ``UNATTACHED_FOR_SECONDS``
is discarded by posts' sweep of discarded media (``posts.tasks``), which then
deletes its files as it deletes a deleted post's.

Until it is attached the only reader of an upload is its uploader's app, so its
files are served at a URL holding the random part of their storage name
(``posts.media_views.upload_file``); once attached they are the post's, served
to whoever may see the post, and that URL answers no more.
"""

import secrets
from collections.abc import Sequence
from datetime import timedelta
from pathlib import PurePosixPath

from django.urls import reverse
from django.utils import timezone

from feed_project.images import Refused
from feed_project.refusals import NotFound
from posts import edits, media
from posts.models import MAX_ALT_TEXT_LENGTH, Post, PostMedia

# Mastodon deletes unattached uploads after a day too.
UNATTACHED_FOR_SECONDS = 24 * 60 * 60
NOT_FOUND = "Record not found"
# Mastodon's sentence, so clients that show it read as they expect.
NOT_ATTACHABLE = "Media {ids} not found or already attached to another post"
LARGEST_ID = 2**63 - 1


def alt_text_of(description: str | None) -> str:
    """A description as stored: trimmed; ``Refused`` past the site's length."""
    alt = (description or "").strip()
    if len(alt) > MAX_ALT_TEXT_LENGTH:
        raise Refused(f"A description is {len(alt):,} characters: at most {MAX_ALT_TEXT_LENGTH:,}.")
    return alt


def upload(*, author_id: int, image: media.Prepared) -> PostMedia:
    """Store a checked image (``media.prepare``) as an upload of ``author_id``."""
    stored = media.store(author_id=author_id, images=[image])
    try:
        return media.row(stored[0], author_id=author_id, post_id=None, position=None)
    except BaseException:
        media.delete_files(media.names_of(stored))  # never a file without its row
        raise


def _id_of(media_id: object) -> int | None:
    text = str(media_id)
    if len(text) > 19 or not text.isascii() or not text.isdecimal() or int(text) > LARGEST_ID:
        return None
    return int(text)


def own_media(*, author_id: int, media_id: object) -> PostMedia:
    """One live image of ``author_id``, an upload or a post's; NotFound for anyone else's."""
    pk = _id_of(media_id)
    found = (
        PostMedia.objects.filter(author_id=author_id, pk=pk, discarded_at__isnull=True).first()
        if pk is not None
        else None
    )
    if found is None:
        raise NotFound(NOT_FOUND)
    return found


def describe(*, user_id: int, item: PostMedia, description: str | None) -> PostMedia:
    """Set an image's description: an upload's in place; a post's as an edit of the post
    (``posts.edits``: only its author, the post live, the edit in its history)."""
    alt = alt_text_of(description)
    if item.post_id is None:
        PostMedia.objects.filter(author_id=item.author_id, pk=item.pk).update(alt_text=alt)
    else:
        post = edits.editable_post(user_id=user_id, post_id=item.post_id)
        images = media.media_by_post([post]).get(post.pk, [])
        alts = [alt if image.pk == item.pk else image.alt_text for image in images]
        edits.edit_post(post=post, changes={}, alt_texts=alts)
    item.alt_text = alt
    return item


def alt_texts_of_edit(
    images: Sequence[PostMedia],
    media_ids: Sequence[object] | None,
    descriptions: dict[str, str | None],
) -> list[str]:
    """The descriptions an edit gives a post's ``images`` (their ids to descriptions),
    the others kept. An edit keeps the images themselves (``posts.edits``): ``media_ids``,
    when sent, must name them all and no other, and a description only one of them."""
    current = [str(image.pk) for image in images]
    if media_ids is not None and sorted({str(m) for m in media_ids}) != sorted(current):
        raise Refused("An edit keeps a post's images: only their descriptions may change.")
    strangers = [media_id for media_id in descriptions if media_id not in current]
    if strangers:
        raise Refused(NOT_ATTACHABLE.format(ids=", ".join(strangers)))
    return [
        alt_text_of(descriptions[str(image.pk)])
        if str(image.pk) in descriptions
        else image.alt_text
        for image in images
    ]


def attachable(*, author_id: int, media_ids: Sequence[object]) -> list[int]:
    """The uploads a new post of ``author_id`` names, in order and each once: ``Refused``
    for an id that is no unattached upload of theirs, or past the site's images a post."""
    wanted = list(dict.fromkeys(str(media_id) for media_id in media_ids))
    if len(wanted) > media.MAX_IMAGES:
        raise Refused(f"A post has at most {media.MAX_IMAGES} images (you chose {len(wanted)}).")
    parsed = [_id_of(media_id) for media_id in wanted]
    found = set(
        PostMedia.objects.filter(
            author_id=author_id,
            pk__in=[pk for pk in parsed if pk is not None],
            post__isnull=True,
            discarded_at__isnull=True,
        ).values_list("pk", flat=True)
    )
    missing = [media_id for media_id, pk in zip(wanted, parsed, strict=True) if pk not in found]
    if missing:
        raise Refused(NOT_ATTACHABLE.format(ids=", ".join(missing)))
    return [pk for pk in parsed if pk is not None]


def attach(*, post: Post, upload_ids: Sequence[int], first_position: int = 0) -> None:
    """Make these uploads the post's images; the caller holds the post's transaction.

    ``Refused`` when one is no longer an unattached upload: another post took it
    first (this UPDATE waits for that post's transaction, then matches nothing)
    or the sweep discarded it.
    """
    for position, pk in enumerate(upload_ids, start=first_position):
        taken = PostMedia.objects.filter(
            author_id=post.author_id, pk=pk, post__isnull=True, discarded_at__isnull=True
        ).update(post_id=post.pk, position=position)
        if not taken:
            raise Refused(NOT_ATTACHABLE.format(ids=pk))


def discard_unattached(*, older_than_seconds: int = UNATTACHED_FOR_SECONDS) -> list[int]:
    """Mark uploads no post named for this long discarded; the authors whose files to delete."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    stale = PostMedia.objects.filter(
        post__isnull=True, discarded_at__isnull=True, created_at__lt=cutoff
    )
    authors = sorted(stale.values_list("author_id", flat=True).distinct())
    if authors:
        stale.update(discarded_at=timezone.now())
    return authors


def token_of(item: PostMedia) -> str:
    """The random part of an upload's storage name: who holds it was given it."""
    return PurePosixPath(item.file).name.split(".")[0]


def upload_path(item: PostMedia, *, thumbnail: bool = False) -> str:
    """Where an unattached upload's file is served to the app that uploaded it."""
    name = "posts:upload_thumbnail" if thumbnail else "posts:upload"
    return reverse(name, args=[item.author_id, item.pk, token_of(item)])


def unattached_by_token(*, author_id: int, media_id: int, token: str) -> PostMedia:
    """The live unattached upload this URL names, if its token is right; else NotFound."""
    if max(author_id, media_id) > LARGEST_ID:
        raise NotFound("No such image.")
    item = PostMedia.objects.filter(
        author_id=author_id, pk=media_id, post__isnull=True, discarded_at__isnull=True
    ).first()
    if item is None or not secrets.compare_digest(token_of(item), token):
        raise NotFound("No such image.")
    return item
