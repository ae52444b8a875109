"""A user's notifications: someone followed, replied, liked, reposted or mentioned them."""

from django.conf import settings
from django.db import models


class Notification(models.Model):
    """Something that happened to a user: a follow, a reply, a like, a repost, a mention."""

    class Kind(models.TextChoices):
        FOLLOW = "follow"
        REPLY = "reply"
        LIKE = "like"
        REPOST = "repost"
        MENTION = "mention"
        QUOTE = "quote"
        EDITED = "edited"
        # A follow request to a locked account, and its acceptance (to the requester).
        REQUEST = "request"
        ACCEPT = "accept"
        # A post by someone the recipient follows with "notify me when they post".
        POST = "post"

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=7, choices=Kind.choices)
    # The actor's and the post's rows live on other shards than the recipient's
    # (feed_project.sharding): no database keys; tests/test_sharding.py checks them in
    # test_keys_the_database_does_not_enforce_still_point_at_rows_after_the_session.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    post = models.ForeignKey(
        "posts.Post",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
    )
    # Which edit of ``post`` an "edited" notification is about (its PostEdit
    # version): one notification per edit. 0 for every other kind. Not a
    # PositiveIntegerField: its unnamed CHECK, added with the column, is a
    # statement Citus refuses; the named constraint below is added apart.
    edit = models.IntegerField(default=0, db_default=0)
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The notifications page: one recipient, newest first, keyset on id.
            models.Index(fields=["recipient", "-id"], name="notification_list_idx"),
        ]
        constraints = [
            # A double click or a retried task does not notify twice.
            models.UniqueConstraint(
                fields=["recipient", "kind", "actor", "post", "edit"],
                name="one_notification_per_event",
                nulls_distinct=False,
            ),
            models.CheckConstraint(
                condition=models.Q(edit__gte=0), name="notification_edit_not_negative"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id}"
