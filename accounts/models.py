from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser, UserManager
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.db.models.functions import Lower

username_validator = RegexValidator(
    r"^[A-Za-z0-9_]+\Z", "Use only letters, digits and underscores."
)


class CaseInsensitiveUserManager(UserManager):
    def get_by_natural_key(self, username: str) -> "User":
        # Log-in with "Alice" finds alice: usernames are unique case-insensitively,
        # and found through their claim (accounts.unique_names): one shard on Citus.
        from accounts import unique_names

        return unique_names.users_named(username).get()


class User(AbstractUser):
    """A person on the site, with the counters their pages show.

    Counters are kept on this row, updated with F() in the transaction that
    changes what they count: a page view never runs COUNT(*).
    """

    username = models.CharField(
        max_length=30,
        unique=True,
        validators=[username_validator],
        help_text="Letters, digits and underscores, up to 30.",
        error_messages={"unique": "That username is taken."},
    )
    display_name = models.CharField(max_length=50, blank=True)
    bio = models.CharField(max_length=300, blank=True)
    last_active_at = models.DateTimeField(null=True, blank=True)
    followers_count = models.PositiveIntegerField(default=0)
    following_count = models.PositiveIntegerField(default=0)
    posts_count = models.PositiveIntegerField(default=0)
    unread_notifications = models.PositiveIntegerField(default=0, db_default=0)
    # The uploaded picture's name in the default storage (accounts.avatar_upload);
    # "" for the generated one (accounts.avatars).
    avatar = models.CharField(max_length=200, blank=True, default="", db_default="")
    # An IANA zone ("Europe/Paris") pages show times in; "" for the site's TIME_ZONE.
    time_zone = models.CharField(max_length=64, blank=True, default="", db_default="")
    # Conversations with a message not yet read (timelines.conversations): the
    # navigation's count, read with the user row, never counted on a page view.
    # Not negative by a named CHECK (Meta): Citus refuses a column added with
    # an unnamed one, as PositiveIntegerField's is.
    unread_conversations = models.IntegerField(default=0, db_default=0)
    # A locked account approves its followers: a follow becomes a request
    # (relations.services.follow); unlocking accepts every pending one.
    locked = models.BooleanField(default=False, db_default=False)
    # ``email`` is the address mail goes to (resets too); it is unique case-
    # insensitively. ``email_verified_at`` says its owner followed our link.
    # ``unconfirmed_email`` is an address asked for and not yet confirmed
    # (a change of address, or a sign-up with an address already in use):
    # it takes ``email``'s place only when its link is followed.
    email_verified_at = models.DateTimeField(null=True, blank=True)
    unconfirmed_email = models.EmailField(blank=True, db_default="", default="")
    # Deletion asked for (accounts.deletion): the account is erased once this
    # time passes, unless its owner logs in before. Kept after the erasure, on
    # the inactive tombstone row that holds the username so it is never reused.
    deletion_due_at = models.DateTimeField(null=True, blank=True)
    erased_at = models.DateTimeField(null=True, blank=True)

    objects = CaseInsensitiveUserManager()

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
            # Accounts from before e-mail (and the demo world) have none: "" is not an address.
            models.UniqueConstraint(
                Lower("email"),
                condition=~models.Q(email=""),
                name="accounts_user_email_ci_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(unread_conversations__gte=0),
                name="accounts_user_unread_conversations_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return self.username

    @classmethod
    def from_db(cls, db, field_names, values):  # type: ignore[no-untyped-def]
        user = super().from_db(db, field_names, values)
        user._claimed = (user.__dict__.get("username"), user.__dict__.get("email"))
        return user

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save the row and, in its transaction, its username and e-mail claims
        (accounts.unique_names): a name or address taken by another account raises
        IntegrityError, as the unique constraints do on plain PostgreSQL."""
        from accounts import unique_names

        with transaction.atomic(using=kwargs.get("using")):
            super().save(*args, **kwargs)
            unique_names.sync(self)

    @property
    def name(self) -> str:
        return self.display_name or self.username

    @property
    def email_verified(self) -> bool:
        return self.email_verified_at is not None and bool(self.email)


class UsernameClaim(models.Model):
    """A username taken, lower-cased: its owner, and its case-insensitive uniqueness
    on every database (accounts.unique_names).

    On Citus ``accounts_user`` is distributed by id, so no constraint there can
    keep "Alice" and "alice" apart, and a look-up by name would read every
    shard; this table is distributed by the name itself. Kept after an
    account's erasure: a username is never given out again.
    """

    name = models.CharField(max_length=30, primary_key=True)
    # Another shard's row (a group of its own): not a database constraint.
    user = models.ForeignKey(
        "User", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )

    def __str__(self) -> str:
        return self.name


class EmailClaim(models.Model):
    """An e-mail address in use as some account's ``email``, lower-cased: as
    ``UsernameClaim``, distributed by the address. Released when the account
    moves to another address or is erased."""

    # Twice an address's 254: lower-casing may lengthen it ("İ" becomes two code points).
    address = models.CharField(max_length=508, primary_key=True)
    user = models.ForeignKey(
        "User", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )

    def __str__(self) -> str:
        return self.address


# Every table below but RegistrationSetting is keyed by its user first, so that on
# Citus it lives on its user's shard, like the follow tables (feed_project.sharding).


class TwoFactor(models.Model):
    """A user's TOTP secret: set up (``confirmed_at`` empty) until a code confirms it.

    ``last_step`` is the 30-second step of the last code accepted: a code of
    that step or an earlier one is refused, so a code works once.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    secret = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    last_step = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"two-factor of {self.user_id}"


class RecoveryCode(models.Model):
    """One single-use recovery code, stored as its SHA-256 (the code has 80 random bits)."""

    pk = models.CompositePrimaryKey("user_id", "digest")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    digest = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"recovery code of {self.user_id}"


class UserSession(models.Model):
    """A signed-in session of a user, for the sessions page: written at log-in,
    touched at most once every few minutes (accounts.sessions)."""

    pk = models.CompositePrimaryKey("user_id", "session_key")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    session_key = models.CharField(max_length=40)
    user_agent = models.CharField(max_length=300, blank=True)
    ip = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"session of {self.user_id}"


class SignupApplication(models.Model):
    """Why someone wants an account, while registration needs a moderator's approval."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    reason = models.TextField(max_length=1000)
    created_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    approved = models.BooleanField(null=True)
    # Another user's row: on Citus on another shard, so not a database constraint.
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )

    def __str__(self) -> str:
        return f"application of {self.user_id}"


class Invite(models.Model):
    """An invite link made by ``user``: good until ``expires_at``, for ``max_uses`` sign-ups.

    The link carries the inviter's id with the code (``<user id>.<code>``),
    so finding an invite is a primary-key lookup on the inviter's shard.
    """

    pk = models.CompositePrimaryKey("user_id", "code")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    code = models.CharField(max_length=32)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    max_uses = models.PositiveIntegerField()
    uses = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(uses__lte=models.F("max_uses")), name="invite_uses_within_max"
            ),
        ]

    def __str__(self) -> str:
        return f"invite {self.user_id}.{self.code}"

    @property
    def token(self) -> str:
        return f"{self.user_id}.{self.code}"


class Export(models.Model):
    """An archive of a user's data (accounts.exports): asked for, prepared by a task, kept
    until ``expires_at``, then its file and row are deleted.

    Keyed by its user (feed_project.sharding: primary key ``(user_id, id)`` on
    PostgreSQL); every read filters ``user_id``. ``done`` of ``total`` is the
    progress the page shows while the task runs; ``file`` is the storage name
    (``STORAGES["default"]``, like post images) once it is ready.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        READY = "ready"
        FAILED = "failed"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set when the archive is ready: the file is deleted after this.
    expires_at = models.DateTimeField(null=True, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    file = models.CharField(max_length=200, blank=True)
    size = models.PositiveBigIntegerField(default=0)

    class Meta:
        indexes = [
            # The export page: a user's newest exports.
            models.Index(fields=["user", "-created_at"], name="export_user_idx"),
            # The hourly sweep of expired archives.
            models.Index(fields=["expires_at"], name="export_expires_idx"),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.user_id}"

    @property
    def percent(self) -> int:
        return min(100, 100 * self.done // self.total) if self.total else 0


class RegistrationSetting(models.Model):
    """The registration mode an operator chose in the admin (accounts.registration).

    One row at most (``id`` 1); with none, the ``REGISTRATION_MODE`` setting
    applies. A reference table on Citus: read on every sign-up page.
    """

    MODES = [
        ("open", "Open: anyone may sign up"),
        ("approval", "Approval: a moderator approves each account"),
        ("invite", "Invite only: an invite link is needed"),
        ("closed", "Closed: nobody may sign up"),
    ]

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    mode = models.CharField(max_length=10, choices=MODES)
    changed_at = models.DateTimeField()
    # Text, not a key: an operator's account may be erased, the record stays.
    changed_by = models.CharField(max_length=150, blank=True)

    class Meta:
        verbose_name = "registration mode"
        verbose_name_plural = "registration mode"
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="registration_setting_one_row"),
        ]

    def __str__(self) -> str:
        return f"registration: {self.mode}"
