"""Tables of a post's content beyond its row: hashtags, trending tags, earlier versions.

Imported at the end of ``posts.models`` so Django registers them with the app.
"""

from django.conf import settings
from django.db import models

from posts.fields import KeyField

MAX_TAG_LENGTH = 100


class PostTag(models.Model):
    """A post carries ``#tag`` (normalized: posts/tags.py). Rewritten by every edit.

    Distributed by the post's author, colocated with the post (docs/SCALING.md:
    a post and its tags are written in one shard's transaction; a tag page
    reads every shard, one index range scan each). ``timeline_key`` is the
    post's, so the tag page is a range scan of ``post_tag_page_idx``.
    """

    pk = models.CompositePrimaryKey("author_id", "post_id", "tag")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    post = models.ForeignKey(
        "posts.Post",
        on_delete=models.CASCADE,
        related_name="tags",
        db_index=False,
        db_constraint=False,
    )
    tag = models.CharField(max_length=MAX_TAG_LENGTH)
    timeline_key = KeyField()

    class Meta:
        indexes = [
            # The tag page: one tag, newest first, keyset on the timeline key.
            models.Index(fields=["tag", "timeline_key"], name="post_tag_page_idx"),
            # Trending: the tags of the last 24 hours (a periodic task).
            models.Index(fields=["timeline_key"], name="post_tag_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.tag} on {self.post_id}"


class TrendingTag(models.Model):
    """A tag used by many distinct authors lately: written by a periodic task, read by pages."""

    tag = models.CharField(max_length=MAX_TAG_LENGTH, primary_key=True)
    rank = models.PositiveSmallIntegerField()
    authors = models.PositiveIntegerField()
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["rank"]

    def __str__(self) -> str:
        return f"#{self.tag} ({self.authors})"


class PostEdit(models.Model):
    """An earlier version of a post, kept when its author edits it (posts/edits.py).

    ``version`` 1 is the text as first published; ``written_at`` is when that
    version was published (the post's time, or the edit that wrote it).
    Distributed by the author, colocated with the post.
    """

    pk = models.CompositePrimaryKey("author_id", "post_id", "version")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    post = models.ForeignKey(
        "posts.Post",
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    version = models.PositiveIntegerField()
    written_at = models.DateTimeField()
    # Every field an edit may change (posts.edits.EDITABLE_FIELDS), as it was.
    text = models.TextField(blank=True)
    spoiler_text = models.CharField(max_length=200, blank=True, default="", db_default="")

    def __str__(self) -> str:
        return f"{self.post_id} v{self.version}"
