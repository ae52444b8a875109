from django.contrib.auth.models import AbstractUser, UserManager
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Lower

username_validator = RegexValidator(
    r"^[A-Za-z0-9_]+\Z", "Use only letters, digits and underscores."
)


class CaseInsensitiveUserManager(UserManager):
    def get_by_natural_key(self, username: str) -> "User":
        # Log-in with "Alice" finds alice: usernames are unique case-insensitively.
        return self.get(username__iexact=username)


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

    objects = CaseInsensitiveUserManager()

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.username

    @property
    def name(self) -> str:
        return self.display_name or self.username
