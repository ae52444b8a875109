from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.signals import last_active_refreshed


def create_user(*, username: str, password: str, email: str = "", display_name: str = "") -> User:
    return User.objects.create_user(
        username=username, password=password, email=email, display_name=display_name
    )


def update_profile(
    *, user: User, display_name: str, bio: str, time_zone: str | None = None
) -> User:
    """The profile's words; ``time_zone`` too unless None (an IANA name, "" the site's)."""
    fields = {"display_name": display_name, "bio": bio}
    if time_zone is not None:
        fields["time_zone"] = time_zone
    User.objects.filter(pk=user.pk).update(**fields)
    for name, value in fields.items():
        setattr(user, name, value)
    return user


def refresh_last_active(*, user: User, now: datetime | None = None) -> bool:
    """Record that ``user`` is here, at most once an interval; True when written.

    The conditional UPDATE makes concurrent requests write once between them.
    """
    now = now or timezone.now()
    previous = user.last_active_at
    interval = settings.ACCOUNTS_LAST_ACTIVE_INTERVAL_SECONDS
    if previous is not None and (now - previous).total_seconds() < interval:
        return False
    stale = User.objects.filter(pk=user.pk, last_active_at=previous)
    if not stale.update(last_active_at=now):
        return False
    user.last_active_at = now
    transaction.on_commit(
        lambda: last_active_refreshed.send(sender=User, user_id=user.pk, previous=previous)
    )
    return True
