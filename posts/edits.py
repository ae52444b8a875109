"""Editing a post, with its history (Mastodon's edits; seed 002 §10: an update works
like a delete, feeds hold keys and the read joins the current version).

An edit keeps the version it replaces as a ``PostEdit`` row (version 1 is the
text first published), then rewrites the post in place: its text, ``edited_at``,
the mentions shown as links, its tags. Search follows by itself (the search
document is a generated column of the text). ``post_edited`` tells
``timelines``, which notifies the people who replied, liked or reposted (once
per edit) and the newly mentioned.

Which fields an edit may change is ``EDITABLE_FIELDS``: each is a column of
both ``Post`` and ``PostEdit`` and a field of ``posts.forms.EditForm``. The
descriptions of the images (alt texts) change with an edit too, in place
(images themselves never change); the history keeps the text and warning.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from feed_project.refusals import Forbidden, NotFound
from posts import selectors, tags
from posts.mentions import existing_mentions
from posts.models import Post, PostEdit, PostMedia
from posts.signals import post_edited
from posts.visibility import is_live

EDITABLE_FIELDS: tuple[str, ...] = ("text", "spoiler_text")


def may_edit(*, user_id: int | None, post: Post) -> bool:
    """Only the author edits, and only a live post of their own words (not a repost)."""
    return (
        user_id is not None
        and post.author_id == user_id
        and not post.repost_of_id
        and is_live(post)
    )


def editable_post(*, user_id: int | None, post_id: str) -> Post:
    """The post ``user_id`` may edit: NotFound when it is not there for them (gone,
    hidden, not for them), Forbidden when it is someone else's or a repost (``may_edit``)."""
    post = selectors.visible_post(viewer_id=user_id, post_id=post_id)
    if not may_edit(user_id=user_id, post=post):
        raise Forbidden("Only the author can edit a post, and a repost has nothing to edit.")
    return post


def post_with_history(*, viewer_id: int | None, post_id: str) -> Post:
    """The post whose versions the viewer may read: a live post they may see, not a
    repost (it has no words of its own to have changed); else NotFound."""
    post = selectors.visible_post(viewer_id=viewer_id, post_id=post_id)
    if post.repost_of_id:
        raise NotFound(selectors.NO_SUCH_POST)
    return post


def _write_alt_texts(post: Post, alt_texts: Sequence[str]) -> bool:
    """Set the descriptions of the post's images, in order; whether any changed."""
    images = PostMedia.objects.filter(
        author_id=post.author_id, post_id=post.pk, discarded_at__isnull=True
    ).order_by("position")
    changed = False
    for image, alt in zip(images, alt_texts, strict=False):
        if image.alt_text != alt:
            PostMedia.objects.filter(author_id=post.author_id, pk=image.pk).update(alt_text=alt)
            changed = True
    return changed


def edit_post(
    *, post: Post, changes: dict[str, str], alt_texts: Sequence[str] | None = None
) -> bool:
    """Apply ``changes`` (of EDITABLE_FIELDS) and the images' ``alt_texts`` to ``post``;
    False when nothing changed.

    One transaction on the author's shard: the post's row is locked, so two
    edits at once number their versions one after the other.
    """
    with transaction.atomic():
        current = Post.objects.select_for_update().with_id(post.pk).get()
        changes = {name: value for name, value in changes.items() if name in EDITABLE_FIELDS}
        alts_changed = alt_texts is not None and _write_alt_texts(current, alt_texts)
        if not alts_changed and all(
            getattr(current, name) == value for name, value in changes.items()
        ):
            return False
        last = (
            PostEdit.objects.filter(author_id=current.author_id, post_id=current.pk)
            .order_by("-version")
            .values_list("version", flat=True)
            .first()
        )
        version = (last or 0) + 1
        PostEdit.objects.create(
            author_id=current.author_id,
            post_id=current.pk,
            version=version,
            written_at=current.edited_at or current.created_at,
            **{name: getattr(current, name) for name in EDITABLE_FIELDS},
        )
        for name, value in changes.items():
            setattr(current, name, value)
        current.edited_at = timezone.now()
        current.mentions = existing_mentions(current.text)
        Post.objects.with_id(current.pk).update(
            edited_at=current.edited_at, mentions=current.mentions, **changes
        )
        tags.write_tags(post=current)
        post_edited.send(
            sender=Post, post_id=current.pk, author_id=current.author_id, version=version
        )
    for name in (*changes, "edited_at", "mentions"):
        setattr(post, name, getattr(current, name))
    return True


@dataclass(frozen=True)
class Version:
    """One version of a post as the history page lists it."""

    number: int
    written_at: datetime
    text: str
    spoiler_text: str = ""
    current: bool = False


def history(post: Post) -> list[Version]:
    """Every version of ``post``, newest (the current one) first: one query, on its shard."""
    earlier = PostEdit.objects.filter(author_id=post.author_id, post_id=post.pk).order_by(
        "-version"
    )
    versions = [Version(row.version, row.written_at, row.text, row.spoiler_text) for row in earlier]
    newest = Version(
        number=len(versions) + 1,
        written_at=post.edited_at or post.created_at,
        text=post.text,
        spoiler_text=post.spoiler_text,
        current=True,
    )
    return [newest, *versions]
