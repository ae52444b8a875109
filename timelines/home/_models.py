"""The home feed's tables: each reader's inbox of timeline keys (seed 002's sync store),
whether it is kept and from where it vouches for the feed, and the cache generation.

Only ``timelines.home`` reads or writes them (an import-linter contract keeps
everyone else out); Django finds them through ``timelines.models``.
"""

from django.conf import settings
from django.db import models

from posts import ids
from posts.fields import KeyField


class InboxEntry(models.Model):
    """One post key in one reader's inbox.

    Keyed by (reader, timeline key): the reader is the shard key and the range
    scan of a feed page. The author id rides along so that unfollowing removes
    that author's entries without decoding keys (seed 004). No foreign-key
    constraints: this is derived data, written 100,000 rows at a time, and the
    read joins to live posts anyway.

    An inbox is complete from its floor (``InboxState.floor``): every post of
    the authors pushed to it with a key at or above both the floor and the
    oldest entry not below it is there. Reads that go below fall back to the
    pull model.
    """

    pk = models.CompositePrimaryKey("reader_id", "timeline_key")
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    timeline_key = KeyField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )

    class Meta:
        verbose_name_plural = "inbox entries"

    def __str__(self) -> str:
        return f"{self.reader_id}:{self.timeline_key}"


class InboxState(models.Model):
    """A reader whose inbox is being kept: pushed to, and trusted on reads once built.

    No row means the inbox must be rebuilt by pull before it is read: a reader
    who never came, or whose inbox the trim sweep released while they were away
    (``_trim.sweep_batch``).
    """

    reader = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    built_at = models.DateTimeField(null=True, blank=True)
    # What the inbox vouches for starts here: every post of the feed with a key at
    # or above both this and the oldest entry not below it is in the inbox, unless
    # its delivery is still on its way. Raised (never lowered while the row lives)
    # by whatever cuts the inbox: the trim, a rebuild cut off by its pull or the
    # cap. A late delivery can write an entry below it (the trim deleted what lay
    # around that key): reads ignore such entries, and the next trim deletes them.
    floor = KeyField(default=ids.LOWEST_KEY, db_default=ids.LOWEST_KEY)

    def __str__(self) -> str:
        return f"inbox of {self.reader_id}"


class CacheGeneration(models.Model):
    """One row: bumped whenever a Redis write fails, so no cache missing it is read.

    Redis keys carry the generation; after an outage every reader's cache is
    refilled from the inbox table instead of serving what was missed.
    """

    value = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"cache generation {self.value}"
