"""A user's read position in one of their timelines."""

from django.conf import settings
from django.db import models


class Marker(models.Model):
    """Where ``user`` last read ``timeline``; ``version`` counts the writes, so an app can
    tell its own position from another's."""

    class Timeline(models.TextChoices):
        HOME = "home"
        NOTIFICATIONS = "notifications"

    # Keyed by its user first: one shard's rows, colocated with the user (feed_project.sharding).
    pk = models.CompositePrimaryKey("user_id", "timeline")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    timeline = models.CharField(max_length=13, choices=Timeline.choices)
    # A status id (home) or a notification id (notifications), as the client sent it.
    last_read_id = models.CharField(max_length=40)
    version = models.IntegerField(default=1)
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.timeline} marker of {self.user_id}"
