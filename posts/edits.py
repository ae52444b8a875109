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
content warning (``spoiler_text``) and alt texts join when they exist: add the
name here, the column to ``PostEdit`` (a migration), the field to the form.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from posts import tags
from posts.mentions import existing_mentions
from posts.models import Post, PostEdit
from posts.signals import post_edited

EDITABLE_FIELDS: tuple[str, ...] = ("text",)


def may_edit(*, user_id: int | None, post: Post) -> bool:
    """Only the author edits, and only a live post of their own words (not a repost)."""
    return (
        user_id is not None
        and post.author_id == user_id
        and not post.repost_of_id
        and post.deleted_at is None
        and post.hidden_at is None
    )


def edit_post(*, post: Post, changes: dict[str, str]) -> bool:
    """Apply ``changes`` (of EDITABLE_FIELDS) to ``post``; False when nothing changed.

    One transaction on the author's shard: the post's row is locked, so two
    edits at once number their versions one after the other.
    """
    with transaction.atomic():
        current = Post.objects.select_for_update().with_id(post.pk).get()
        changes = {name: value for name, value in changes.items() if name in EDITABLE_FIELDS}
        if all(getattr(current, name) == value for name, value in changes.items()):
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
    current: bool = False


def history(post: Post) -> list[Version]:
    """Every version of ``post``, newest (the current one) first: one query, on its shard."""
    earlier = PostEdit.objects.filter(author_id=post.author_id, post_id=post.pk).order_by(
        "-version"
    )
    versions = [Version(row.version, row.written_at, row.text) for row in earlier]
    newest = Version(
        number=len(versions) + 1,
        written_at=post.edited_at or post.created_at,
        text=post.text,
        current=True,
    )
    return [newest, *versions]
