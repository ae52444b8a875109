"""Private messages: each participant's copy of a conversation, and of its messages.

A conversation is the direct posts among one set of people (``key``: their
ids, sorted, dot-separated). Seed 002's two-way relations are delivered by
push: a direct post writes a ``Conversation`` row and a
``ConversationMessage`` row for each participant, keyed by that participant
(the shard key), so every page reads one person's rows only.
"""

from django.conf import settings
from django.db import models

from posts.fields import KeyField


class Conversation(models.Model):
    """``user``'s view of one conversation: its newest message, and whether it is unread."""

    pk = models.CompositePrimaryKey("user_id", "key")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    key = models.CharField(max_length=250)
    last_key = KeyField()  # the timeline key of the newest message
    unread = models.BooleanField(default=False)

    class Meta:
        indexes = [
            # /messages/: one person's conversations, newest message first (keyset).
            models.Index(fields=["user", "-last_key"], name="conversation_list_idx"),
        ]

    def __str__(self) -> str:
        return f"conversation {self.key} of {self.user_id}"

    @property
    def participant_ids(self) -> list[int]:
        return [int(part) for part in self.key.split(".")]


class ConversationMessage(models.Model):
    """One message (a direct post, by its timeline key) of a conversation, in ``user``'s copy."""

    pk = models.CompositePrimaryKey("user_id", "key", "timeline_key")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    key = models.CharField(max_length=250)
    timeline_key = KeyField()

    def __str__(self) -> str:
        return f"{self.timeline_key} in {self.key} of {self.user_id}"
