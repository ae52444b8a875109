"""Delivery's bookkeeping: the pulled authors, each post's fan-out, and the outbox.

The inbox tables belong to the home feed (``timelines.home``), which alone
touches them; they are registered here, with the rooms' own models.
"""

from django.conf import settings
from django.db import models


class PullAuthor(models.Model):
    """An author some of whose posts were not pushed: readers pull them.

    Fan-out adds the author when it skips a post for being by a big account;
    the row stays, so posts from that time are still pulled after the
    account shrinks below the threshold.
    """

    # A reference table on Citus: it cannot point at one user's shard (feed_project.sharding).
    author = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="+",
        db_constraint=False,
    )
    since = models.DateTimeField()

    def __str__(self) -> str:
        return f"pull {self.author_id}"


class FanOut(models.Model):
    """The delivery of one post: an outbox row written with the post, and its lag.

    Written in the post's own transaction (``post_created``), so a post whose
    plan never ran is found by the sweeper; the plan records each chunk as a
    ``PendingTask``. ``chunks_done`` counts distinct chunks (a chunk run twice
    counts once), and ``finished_at`` is set when no chunk is left pending.
    ``finished_at - created_at`` is the fan-out lag.
    """

    class Mode(models.TextChoices):
        PUSH = "push"
        PULL = "pull"

    # Sharded by post id, posts by author (feed_project.sharding): not a database key.
    post = models.OneToOneField(
        "posts.Post",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="+",
        db_constraint=False,
    )
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    mode = models.CharField(max_length=4, choices=Mode.choices, blank=True)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    recipients = models.PositiveIntegerField(default=0)
    # The sweep's sendings of the plan (``outbox.due``): none yet, or when it last did.
    sweeps = models.SmallIntegerField(default=0, db_default=0)
    swept_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["created_at"],
                name="fanout_pending_idx",
                condition=models.Q(finished_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"fan-out of {self.post_id}"

    @property
    def lag_ms(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.created_at).total_seconds() * 1000


class PendingTask(models.Model):
    """A task that a committed change still needs run: the outbox of every inbox change.

    Written in the same transaction as the change (a follow, a mute, a delete,
    a like, a rebuild request, a chunk of a fan-out), so a change committed is
    a task recorded; the task deletes its row when it has done the work, and
    ``timelines.sweep_undelivered`` queues again the rows left behind (the
    message was lost, the worker died, the broker refused). The row is the
    Celery call itself: task name and JSON arguments (``timelines.outbox``).

    Keyed by ``owner`` first, the user whose inbox or notifications change (or
    the author of the post being delivered), so that Citus can shard it with
    the inboxes. Recording the same call again while it is pending bumps
    ``version`` instead of adding a row: a task deletes the row only if the
    version is still the one it started with, so a change made while it ran
    is not forgotten. No foreign keys: rows outlive nothing and are few.
    """

    pk = models.CompositePrimaryKey("owner", "task", "args")
    owner = models.BigIntegerField()
    task = models.CharField(max_length=64)
    args = models.CharField(max_length=200)
    changed_at = models.DateTimeField()
    version = models.PositiveIntegerField(default=1)
    # How often the sweep has sent it since it was last recorded (``outbox.due``).
    sweeps = models.SmallIntegerField(default=0, db_default=0)

    class Meta:
        indexes = [
            # The sweeper: the oldest rows first, across every owner.
            models.Index(fields=["changed_at"], name="pending_task_changed_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.task}{self.args} for {self.owner}"


# Django finds the models of the rooms inside timelines here: the home feed's inbox
# tables (not named here: only timelines.home may use them), notifications, private
# messages, read positions and who to follow.
from timelines.conversations.models import Conversation, ConversationMessage  # noqa: E402
from timelines.home import _models as _home_models  # noqa: E402, F401
from timelines.markers.models import Marker  # noqa: E402
from timelines.notifications.models import Notification  # noqa: E402
from timelines.suggestions.models import Contact, Suggestion  # noqa: E402

__all__ = [
    "Contact",
    "Conversation",
    "ConversationMessage",
    "FanOut",
    "Marker",
    "Notification",
    "PendingTask",
    "PullAuthor",
    "Suggestion",
]
