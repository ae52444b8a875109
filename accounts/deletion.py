"""Deleting an account: asked for, a grace period, then erased.

``request_deletion`` (the password and the second factor checked by the
view) sets ``User.deletion_due_at`` to now + ``ACCOUNT_DELETION_GRACE_DAYS``,
ends every session, and announces ``account_deactivated``: posts hides the
account's posts (every read joins live, visible posts, so followers' feeds
drop them at once) and the profile answers 404. Logging in before the due
time cancels it (``cancel_deletion``, from the log-in signal).

When the grace is over (at once for 0 days), the ``accounts.erase_account``
task runs ``erase``: one transaction that sends ``account_erasing``, so each
app erases its own rows in its own room (relations: both follow tables with
the other sides' counters, blocks, mutes; posts: posts, likes given and
received with their counters, reposts and replies pointing at them, reports,
moderation logs reduced to the username; timelines: inboxes, caches,
notifications to and from with unread counters, outbox and fan-out rows), and
then erases accounts' own rows (sessions, two-factor, invites, applications,
admin log; data exports, whose files a task deletes on commit) and scrubs
the user row.

The row itself stays as an inactive tombstone: username (never reused: the
unique constraint keeps it taken), an unusable password, no e-mail, no name,
counters zero. Ids are never reused either, so no post id can be given out
again. accounts imports no app above it; the signal is the seam
(docs/ARCHITECTURE.md, "Deleting an account").
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.db import transaction
from django.utils import timezone

from accounts import exports, sessions, tasks, unique_names
from accounts.models import Invite, RecoveryCode, SignupApplication, TwoFactor, User, UserSession
from accounts.signals import account_deactivated, account_erasing, account_reactivated


def grace() -> timedelta:
    return timedelta(days=settings.ACCOUNT_DELETION_GRACE_DAYS)


def request_deletion(*, user: User, now: datetime | None = None) -> datetime:
    """Schedule ``user``'s erasure; their account is hidden from others until then."""
    due = (now or timezone.now()) + grace()
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(deletion_due_at=due)
        account_deactivated.send(sender=User, user_id=user.pk)
        sessions.end_other_sessions(user=user, current_key=None)
        if due <= timezone.now():
            tasks.enqueue_on_commit(tasks.erase_account, user.pk)
    user.deletion_due_at = due
    return due


def cancel_deletion(*, user: User) -> bool:
    """The owner came back in time: the account is theirs again; False if none was asked."""
    with transaction.atomic():
        changed = User.objects.filter(
            pk=user.pk, deletion_due_at__isnull=False, erased_at__isnull=True
        ).update(deletion_due_at=None)
        if changed:
            account_reactivated.send(sender=User, user_id=user.pk)
    user.deletion_due_at = None
    return bool(changed)


def due_ids(*, now: datetime | None = None) -> list[int]:
    """Accounts whose grace is over. A query across every shard (the sweeper's)."""
    return list(
        User.objects.filter(
            deletion_due_at__lte=now or timezone.now(), erased_at__isnull=True
        ).values_list("pk", flat=True)
    )


def erase(*, user_id: int, now: datetime | None = None) -> bool:
    """Erase an account whose grace is over; False when there is none (gone or cancelled).

    Idempotent: a second run finds the tombstone and does nothing.
    """
    now = now or timezone.now()
    with transaction.atomic():
        user = (
            User.objects.select_for_update(no_key=True)
            .filter(pk=user_id, deletion_due_at__lte=now, erased_at__isnull=True)
            .first()
        )
        if user is None:
            return False
        account_erasing.send(sender=User, user_id=user.pk, username=user.username)
        sessions.end_other_sessions(user=user, current_key=None)
        UserSession.objects.filter(user_id=user.pk).delete()
        RecoveryCode.objects.filter(user_id=user.pk).delete()
        TwoFactor.objects.filter(user_id=user.pk).delete()
        Invite.objects.filter(user_id=user.pk).delete()
        SignupApplication.objects.filter(user_id=user.pk).delete()
        # Applications this user decided keep their decision, not the decider.
        SignupApplication.objects.filter(decided_by_id=user.pk).update(decided_by=None)
        LogEntry.objects.filter(user_id=user.pk).delete()
        # Data exports: their files, then rows, go once this commits (a task).
        exports.retire_all(user_id=user.pk)
        user.groups.clear()
        user.user_permissions.clear()
        user.set_unusable_password()
        # The username's claim stays with the tombstone; the address is free again.
        unique_names.release_email(user_id=user.pk, address=user.email)
        User.objects.filter(pk=user.pk).update(
            password=user.password,
            email="",
            unconfirmed_email="",
            email_verified_at=None,
            first_name="",
            last_name="",
            display_name="",
            bio="",
            is_active=False,
            is_staff=False,
            is_superuser=False,
            last_login=None,
            last_active_at=None,
            followers_count=0,
            following_count=0,
            posts_count=0,
            unread_notifications=0,
            erased_at=now,
        )
    return True
