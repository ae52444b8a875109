"""The follow graph, split vertically (seed 000).

``Follower`` answers "who follows X" and ``Followee`` answers "whom does X
follow". Each is keyed by its first column, the shard key, and the services
write both in one transaction, so they mirror each other at every commit.
"""

from django.conf import settings
from django.db import models


class Follower(models.Model):
    """``follower`` follows ``user``: one row in ``user``'s list of followers."""

    pk = models.CompositePrimaryKey("user_id", "follower_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    follower = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        # Not a database key: Citus refuses one between two users' shards
        # (feed_project.sharding); tests/test_sharding.py checks it instead, in
        # test_keys_the_database_does_not_enforce_still_point_at_rows_after_the_session.
        db_constraint=False,
    )
    created_at = models.DateTimeField()
    # The follower asked to be notified of ``user``'s posts (mirrors Followee's):
    # read from the author's side when a post is made.
    notify_posts = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(user=models.F("follower")), name="follower_not_self"
            ),
        ]
        indexes = [
            # Serves the followers page (newest first, keyset) and fan-out chunks.
            models.Index(fields=["user", "-created_at", "-follower"], name="follower_list_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.follower_id} follows {self.user_id}"


class Followee(models.Model):
    """``user`` follows ``followee``: one row in ``user``'s following list."""

    pk = models.CompositePrimaryKey("user_id", "followee_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    followee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        # Not a database key: Citus refuses one between two users' shards
        # (feed_project.sharding); tests/test_sharding.py checks it instead, in
        # test_keys_the_database_does_not_enforce_still_point_at_rows_after_the_session.
        db_constraint=False,
    )
    created_at = models.DateTimeField()
    # Per-follow options (relations.services.set_follow_options): ``user``'s feed
    # leaves out ``followee``'s plain reposts (relations.visibility), and ``user`` is
    # notified of ``followee``'s posts (mirrored on the Follower row).
    hide_reposts = models.BooleanField(default=False, db_default=False)
    notify_posts = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(user=models.F("followee")), name="followee_not_self"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "-created_at", "-followee"], name="followee_list_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} follows {self.followee_id}"


class Block(models.Model):
    """``user`` blocks ``blocked``: neither sees the other, neither can follow the other."""

    pk = models.CompositePrimaryKey("user_id", "blocked_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    blocked = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        # Not a database key: Citus refuses one between two users' shards
        # (feed_project.sharding); tests/test_sharding.py checks it instead, in
        # test_keys_the_database_does_not_enforce_still_point_at_rows_after_the_session.
        db_constraint=False,
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(user=models.F("blocked")), name="block_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} blocks {self.blocked_id}"


class Mute(models.Model):
    """``user`` mutes ``muted``: their posts and reposts leave ``user``'s feed."""

    pk = models.CompositePrimaryKey("user_id", "muted_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    muted = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(user=models.F("muted")), name="mute_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} mutes {self.muted_id}"


class FollowImport(models.Model):
    """A CSV of follows being imported (relations.follow_import): the accounts it lists,
    how far the task got, and what it did with each line.

    Keyed by its user (feed_project.sharding: primary key ``(user_id, id)`` on
    PostgreSQL); every read filters ``user_id``. ``entries`` is
    ``[[line, username], ...]`` as read from the file; ``report`` is
    ``follow_import.Report`` as JSON once the task is done.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    entries = models.JSONField()
    done = models.PositiveIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="follow_import_user_idx")]

    def __str__(self) -> str:
        return f"follow import {self.pk} of {self.user_id}"

    @property
    def total(self) -> int:
        return len(self.entries)

    @property
    def percent(self) -> int:
        return min(100, 100 * self.done // self.total) if self.total else 0


class FollowRequest(models.Model):
    """``requester`` asks to follow ``user``, whose account is locked: one row in
    ``user``'s list of requests, keyed by ``user`` (the shard key) until accepted
    (it becomes a follow) or rejected (it goes)."""

    pk = models.CompositePrimaryKey("user_id", "requester_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        # Not a database key: Citus refuses one between two users' shards.
        db_constraint=False,
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(user=models.F("requester")), name="follow_request_not_self"
            ),
        ]
        indexes = [
            # The requests page: newest first, keyset (relations.selectors).
            models.Index(
                fields=["user", "-created_at", "-requester"], name="follow_request_list_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.requester_id} asks to follow {self.user_id}"


class MutedWord(models.Model):
    """A word or phrase ``user`` never wants to see in their feed, threads, notifications
    or search (relations.muted_words builds ``pattern``; relations.visibility applies it),
    until ``expires_at`` if set."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    phrase = models.CharField(max_length=100)
    # A regular expression both PostgreSQL (~*) and Python (re, SQLite's REGEXP)
    # read alike: the phrase as a whole word, or as a substring for CJK text.
    pattern = models.CharField(max_length=700)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "phrase"], name="one_muted_word_per_phrase"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} mutes the word {self.phrase!r}"
