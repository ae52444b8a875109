from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import models

from posts import ids
from posts.fields import KeyField

# A post's images: a model in a module of its own, registered with the app from here.
from posts.media_models import MAX_ALT_TEXT_LENGTH, PostMedia  # noqa: F401

MAX_POST_LENGTH = 500
MAX_SPOILER_LENGTH = 200


class PostQuerySet(models.QuerySet["Post"]):
    def visible(self) -> "PostQuerySet":
        """Neither deleted by its author nor hidden by a moderator."""
        return self.filter(deleted_at__isnull=True, hidden_at__isnull=True)

    def by_author(self, author_id: int) -> "PostQuerySet":
        """One author's posts: a range scan of the primary key (author_id, id)."""
        low, high = ids.post_id_range(author_id)
        return self.filter(author_id=author_id, pk__gte=low, pk__lt=high)

    def with_id(self, post_id: str) -> "PostQuerySet":
        """The post of this id, found by its author too: one shard, one primary-key probe.

        A malformed id matches nothing.
        """
        if not ids.is_timeline_key(post_id):
            return self.none()
        return self.filter(author_id=ids.author_of_post_id(post_id), pk=post_id)

    def with_ids(self, post_ids: Iterable[str]) -> "PostQuerySet":
        """The posts of these ids, filtered by their authors too (the shard key)."""
        post_ids = [post_id for post_id in post_ids if ids.is_timeline_key(post_id)]
        authors = {ids.author_of_post_id(post_id) for post_id in post_ids}
        return self.filter(author_id__in=authors, pk__in=post_ids)


MAX_ANCESTORS = 20


class Visibility(models.TextChoices):
    """Who may see a post (posts.visibility), from the most open to the strictest."""

    PUBLIC = "public", "Public"
    UNLISTED = "unlisted", "Unlisted (not in search, tags or the public timeline)"
    FOLLOWERS = "followers", "Followers only"
    DIRECT = "direct", "Mentioned people only"


# Strictness by level: a reply takes its parent's level when its own is more open.
STRICTNESS = {level: n for n, level in enumerate(Visibility.values)}


class Post(models.Model):
    """A post. Its id starts with its author and then its time (posts.ids).

    A repost is a post of the reposter with ``repost_of`` set and no text (as
    Mastodon's reblogs are): it has its own id and timeline key, the time of
    the repost, so delivery treats it like any post; feeds show the original.
    A reply is a post with ``in_reply_to`` set.

    Deleting keeps the row (so its id is never given out again and feeds that
    still hold its key simply skip it) but drops the text at once.
    """

    class HiddenReason(models.TextChoices):
        MODERATOR = "moderator", "hidden by a moderator"
        SUSPENSION = "suspension", "author suspended"
        DELETION = "deletion", "author deleting their account"

    # Django's primary key. On PostgreSQL the table's is (author_id, id) instead
    # (feed_project.sharding: Citus needs the author in it), unique exactly
    # when the id is, as an id starts with its author; post_id_idx serves
    # lookups by id alone.
    id = KeyField(primary_key=True)
    timeline_key = KeyField(editable=False)
    # No index of its own: the primary key's first column (by_author).
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="posts", db_index=False
    )
    text = models.TextField(max_length=MAX_POST_LENGTH, blank=True)
    # A content warning: when set, pages show the text and images behind it.
    spoiler_text = models.CharField(
        max_length=MAX_SPOILER_LENGTH, blank=True, default="", db_default=""
    )
    in_reply_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replies",
        db_index=False,
        db_constraint=False,
    )
    # The posts this reply answers, up the thread, nearest last, at most
    # MAX_ANCESTORS, space-separated: a thread's ancestors in one query routed
    # by their ids (a recursive walk across authors' shards is a statement
    # Citus cannot run). Written once, with the reply.
    ancestry = models.TextField(blank=True, default="", db_default="", editable=False)
    repost_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="reposts",
        db_index=False,
        db_constraint=False,
    )
    # A quote post (posts/quotes.py): a post with text of its own showing this
    # one embedded. Never collapsed with reposts; the quoted post may be on
    # another shard (no database key; erasure forgets it).
    quote_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    # Set by each edit (posts/edits.py); earlier versions are PostEdit rows.
    edited_at = models.DateTimeField(null=True, blank=True)
    # Who the text @mentions that existed when it was saved (lower-cased,
    # space-separated): the mentions shown as links, with no lookup a page.
    mentions = models.TextField(blank=True, default="", db_default="")
    # Who may see it (posts.visibility), fixed when posted.
    visibility = models.CharField(
        max_length=9, choices=Visibility.choices, default="public", db_default="public"
    )
    # A direct post's readers besides its author: their user ids, space-separated
    # with a space at each end (" 3 17 "), so that every dialect of the rule asks
    # the post row itself (LIKE '% 17 %'), with no join across shards. Empty for
    # every other level. Written once, with the post.
    recipients = models.TextField(blank=True, default="", db_default="", editable=False)
    # Database defaults too, so bulk loads (seed_demo's COPY) may leave them out.
    reply_count = models.PositiveIntegerField(default=0, db_default=0)
    like_count = models.PositiveIntegerField(default=0, db_default=0)
    repost_count = models.PositiveIntegerField(default=0, db_default=0)
    deleted_at = models.DateTimeField(null=True, blank=True)
    hidden_at = models.DateTimeField(null=True, blank=True)
    hidden_reason = models.CharField(
        max_length=10, choices=HiddenReason.choices, blank=True, default="", db_default=""
    )

    objects = PostQuerySet.as_manager()

    class Meta:
        indexes = [
            # The replies of a post, in time order (thread pages).
            models.Index(
                fields=["in_reply_to", "timeline_key"],
                name="post_replies_idx",
                condition=models.Q(in_reply_to__isnull=False),
            ),
            # Feed entries by their keys, newest first (timelines.home._items): the
            # statement stops at the page's last entry instead of checking every
            # key it was given against the feed rule.
            models.Index(fields=["timeline_key"], name="post_timeline_idx"),
            # The public timeline (posts.public_timeline): a range scan, newest first.
            models.Index(
                fields=["timeline_key"],
                name="post_public_idx",
                condition=models.Q(visibility="public", repost_of__isnull=True),
            ),
            # Who reposted a post (feed collapsing, "reposted by").
            models.Index(
                fields=["repost_of", "author"],
                name="post_reposts_idx",
                condition=models.Q(repost_of__isnull=False),
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["author", "repost_of"],
                name="one_live_repost_per_author",
                condition=models.Q(repost_of__isnull=False, deleted_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return self.id

    @property
    def ancestor_ids(self) -> list[str]:
        """What ``ancestry`` holds: the ids up the thread, nearest last."""
        return self.ancestry.split()

    def ancestry_of_reply(self) -> str:
        """The ``ancestry`` of a reply to this post."""
        return " ".join([*self.ancestor_ids, self.pk][-MAX_ANCESTORS:])

    @property
    def created_at(self) -> datetime:
        return ids.moment_of(ids.parse_post_id(self.id).time)

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def recipient_ids(self) -> list[int]:
        """A direct post's readers besides its author (``recipients``)."""
        return [int(part) for part in self.recipients.split()]

    @property
    def may_be_shared(self) -> bool:
        """Public and unlisted posts may be reposted and quoted; others never."""
        return self.visibility in (Visibility.PUBLIC, Visibility.UNLISTED)


class Like(models.Model):
    """``user`` likes ``post``. Keyed by user: "which of these did I like" is one range."""

    pk = models.CompositePrimaryKey("user_id", "post_id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            # A liker's likes by time, the latest first (the API's favourites).
            models.Index(fields=["user", "created_at", "post"], name="like_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} likes {self.post_id}"


class Report(models.Model):
    """A user's report of a post or a profile, and what a moderator did about it.

    A reference table on Citus (feed_project.sharding): its keys are not enforced by the
    database, which cannot point a copy on every node at one user's shard; tests/test_sharding.py
    checks them (test_keys_the_database_does_not_enforce_still_point_at_rows_after_the_session).
    """

    class Status(models.TextChoices):
        OPEN = "open"
        ACTIONED = "actioned"
        DISMISSED = "dismissed"

    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="reports_filed",
        db_constraint=False,
    )
    post = models.ForeignKey(
        Post,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="reports_against",
        db_constraint=False,
    )
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField()
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.OPEN)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    action = models.CharField(max_length=100, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "-created_at"], name="report_queue_idx")]
        permissions = [("moderate", "Can hide posts, suspend users and work the report queue")]

    def __str__(self) -> str:
        return f"report {self.pk} on {self.post_id or self.user_id}"


class ModerationLog(models.Model):
    """Every moderation action: who did what to which post or user, and when."""

    moderator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    action = models.CharField(max_length=30)
    post = models.ForeignKey(
        Post,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField()
    # Set when an account named here is erased (posts.erasure): the log keeps
    # the username as text, its key is emptied.
    username = models.CharField(max_length=30, blank=True, default="", db_default="")
    moderator_username = models.CharField(max_length=30, blank=True, default="", db_default="")

    def __str__(self) -> str:
        return f"{self.action} by {self.moderator_id}"


# Tags, trending tags and edit history live in a module of their own.
from posts.content_models import PostEdit, PostTag, TrendingTag  # noqa: E402, F401
