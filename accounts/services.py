from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.signals import account_unlocked, last_active_refreshed


def create_user(*, username: str, password: str, email: str = "", display_name: str = "") -> User:
    return User.objects.create_user(
        username=username, password=password, email=email, display_name=display_name
    )


def update_profile(
    *,
    user: User,
    display_name: str,
    bio: str,
    time_zone: str | None = None,
    locked: bool | None = None,
) -> User:
    """Save what the profile page edits; ``time_zone`` (an IANA name, "" the site's)
    and ``locked`` None leave them as they are.

    Unlocking sends ``account_unlocked`` in the transaction (relations accepts
    every pending follow request).
    """
    fields: dict[str, object] = {"display_name": display_name, "bio": bio}
    if time_zone is not None:
        fields["time_zone"] = time_zone
    if locked is not None:
        fields["locked"] = locked
    with transaction.atomic():
        was_locked = (
            User.objects.select_for_update(no_key=True)
            .filter(pk=user.pk)
            .values_list("locked", flat=True)
            .first()
        )
        User.objects.filter(pk=user.pk).update(**fields)
        if was_locked and locked is False:
            account_unlocked.send(sender=User, user_id=user.pk)
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
