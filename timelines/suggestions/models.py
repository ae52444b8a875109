"""Contact degrees and precomputed suggestions, each keyed by the user it belongs to
(feed_project.sharding: distributed by ``user_id``, colocated with the user's rows)."""

from django.conf import settings
from django.db import models


class Contact(models.Model):
    """How much ``user`` has had to do with ``other`` lately (seed 003's contact degree).

    One row each way, each on its user's shard, raised together
    (``suggestions.contacts.raise_degree``). ``degree`` is the value at
    ``updated_at``; it halves every ``contacts.HALF_LIFE`` after. Never shown.
    """

    pk = models.CompositePrimaryKey("user_id", "other_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    # Another user's shard: no database key (tests/test_sharding.py checks the rows).
    other = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    degree = models.FloatField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"contact of {self.user_id} with {self.other_id}"


class Suggestion(models.Model):
    """Someone ``user`` might follow, ``rank`` 0 first, written by the ranking task.

    The person's name, picture and lock are copied in, so the sidebar's one
    query reads the user's own shard and joins nothing; the next refresh
    brings changes (``suggestions.ranking``).
    """

    pk = models.CompositePrimaryKey("user_id", "suggested_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    suggested = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    # Not a PositiveSmallIntegerField: its unnamed CHECK is a statement Citus refuses.
    rank = models.SmallIntegerField()
    username = models.CharField(max_length=30)
    display_name = models.CharField(max_length=50, blank=True)
    avatar = models.CharField(max_length=200, blank=True)
    locked = models.BooleanField(default=False)

    class Meta:
        indexes = [
            # The sidebar and /suggestions/: one user's rows, best first.
            models.Index(fields=["user", "rank"], name="suggestion_rank_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.suggested_id} for {self.user_id}"

    @property
    def name(self) -> str:
        return self.display_name or self.username
