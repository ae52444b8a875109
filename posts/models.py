from datetime import datetime

from django.conf import settings
from django.db import models

from posts import ids
from posts.fields import KeyField

MAX_POST_LENGTH = 500


class PostQuerySet(models.QuerySet["Post"]):
    def visible(self) -> "PostQuerySet":
        return self.filter(deleted_at__isnull=True)

    def by_author(self, author_id: int) -> "PostQuerySet":
        """One author's posts: a range scan on the primary key, no secondary index."""
        low, high = ids.post_id_range(author_id)
        return self.filter(pk__gte=low, pk__lt=high)


class Post(models.Model):
    """A post. Its id starts with its author and then its time (posts.ids).

    Deleting keeps the row (so its id is never given out again and feeds that
    still hold its key simply skip it) but drops the text at once.
    """

    id = KeyField(primary_key=True)
    timeline_key = KeyField(editable=False)
    # No index of its own: the primary key's prefix is the author (by_author).
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="posts", db_index=False
    )
    text = models.TextField(max_length=MAX_POST_LENGTH)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = PostQuerySet.as_manager()

    def __str__(self) -> str:
        return self.id

    @property
    def created_at(self) -> datetime:
        return ids.moment_of(ids.parse_post_id(self.id).time)

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None
