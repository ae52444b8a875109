"""The model of post images (``posts.media``), apart so that ``posts.models`` stays short.

Imported by ``posts.models`` (Django finds it there); it refers to ``Post`` by name.
"""

from django.conf import settings
from django.db import models

MAX_ALT_TEXT_LENGTH = 1500


class PostMedia(models.Model):
    """An image of a post (``posts.media``): its files in ``STORAGES["default"]``, its alt text.

    Sharded like the post: on PostgreSQL the table's primary key is (author_id,
    id) (feed_project.sharding) and every read filters ``author_id`` as well as
    the post (a post id carries its author). ``post`` is not enforced by the
    database, as Citus refuses a key that does not run from author to author;
    tests/test_sharding.py checks it. An image uploaded ahead of its post (Mastodon's
    clients upload first, ``posts.uploads``) has no post and no position until a
    post names it; one never named is discarded by the sweep. A deleted post's media are marked
    ``discarded_at`` in the delete's transaction; ``posts.tasks`` then deletes
    the files and the rows (the rows are their own to-do list, swept if a task
    is lost). Pages reach the files through ``posts.media_views`` only, which
    checks that the reader may see the post.
    """

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    post = models.ForeignKey(
        "posts.Post",
        on_delete=models.CASCADE,
        related_name="media",
        db_index=False,
        db_constraint=False,
        null=True,  # an upload no post has named yet (posts.uploads)
        blank=True,
    )
    position = models.PositiveSmallIntegerField(null=True, blank=True)  # 0 to 3, as chosen
    # Editable after posting (posts.edits); the files are not.
    alt_text = models.TextField(max_length=MAX_ALT_TEXT_LENGTH, blank=True, default="")
    # Storage names: random, so a public bucket cannot be listed by guessing.
    file = models.CharField(max_length=200)
    thumbnail = models.CharField(max_length=200)
    content_type = models.CharField(max_length=20)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    thumbnail_width = models.PositiveIntegerField()
    thumbnail_height = models.PositiveIntegerField()
    size = models.PositiveIntegerField()  # bytes of the stored original
    created_at = models.DateTimeField()
    discarded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "post media"
        constraints = [
            # Also the index of every read: a page's media by (author, post).
            models.UniqueConstraint(
                fields=["author", "post", "position"], name="post_media_position_unique"
            ),
        ]
        indexes = [
            # The sweep of discarded media whose deletion task was lost.
            models.Index(
                fields=["discarded_at"],
                name="post_media_discarded_idx",
                condition=models.Q(discarded_at__isnull=False),
            ),
            # The sweep of uploads no post named (posts.uploads.discard_unattached).
            models.Index(
                fields=["created_at"],
                name="post_media_unattached_idx",
                condition=models.Q(post__isnull=True, discarded_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        if self.post_id is None:
            return f"upload {self.pk} of user {self.author_id}"
        return f"{self.post_id} image {self.position + 1}"
