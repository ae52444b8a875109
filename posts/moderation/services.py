"""Moderation services: hide and restore posts, suspend and unsuspend users, reports.

Every action a moderator takes writes a ModerationLog row in the transaction
that makes the change, so the log holds exactly what happened. An action
that changes nothing (hiding a hidden post) is not logged and returns False.

Hidden posts leave every list at once because every read filters with
``Post.objects.visible()``; no feed or inbox needs touching. Suspension sets
``is_active=False``: Django's ModelBackend then refuses the log-in and
``get_user`` returns None for the user's existing sessions, so they end on
their next request. Deleting the session rows as well would mean decoding
every session in the table (it is not keyed by user), so that is left to
``clearsessions``.
"""

from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from feed_project.refusals import Invalid, NotFound
from posts import ids, selectors
from posts.models import ModerationLog, Post, Report
from relations.visibility import is_blocked_either_way

HIDE_POST = "hide_post"
RESTORE_POST = "restore_post"
SUSPEND_USER = "suspend_user"
UNSUSPEND_USER = "unsuspend_user"
DISMISS_REPORT = "dismiss_report"
# What resolve_report may do about a report.
REPORT_ACTIONS = (HIDE_POST, SUSPEND_USER, DISMISS_REPORT)
MODERATE = "posts.moderate"


def is_moderator(user: User | AnonymousUser) -> bool:
    """Whether ``user`` moderates: active staff (or a superuser) with ``posts.moderate``.

    Moderators are staff (``accounts.moderators``; the admin lets no one else
    in), so only staff are asked for the permission: loading a user's
    permissions is two queries, on every post page of every reader.
    """
    return user.is_active and (user.is_staff or user.is_superuser) and user.has_perm(MODERATE)


def _log(
    *, moderator: User, action: str, post: Post | None = None, user: User | None = None, note=""
) -> ModerationLog:
    return ModerationLog.objects.create(
        moderator=moderator,
        action=action,
        post=post,
        user=user,
        note=note[:500],
        created_at=timezone.now(),
    )


def hide_post(*, moderator: User, post: Post, note: str = "") -> bool:
    """Hide a post from everyone but moderators.

    A post hidden because its author was suspended becomes hidden by a
    moderator, so that unsuspending the author does not bring it back.
    """
    with transaction.atomic():
        changed = (
            Post.objects.with_id(post.pk)
            .filter(deleted_at__isnull=True)
            .exclude(hidden_reason=Post.HiddenReason.MODERATOR)
            .update(
                hidden_at=Coalesce("hidden_at", timezone.now()),
                hidden_reason=Post.HiddenReason.MODERATOR,
            )
        )
        if changed:
            _log(moderator=moderator, action=HIDE_POST, post=post, user=post.author, note=note)
    return bool(changed)


def restore_post(*, moderator: User, post: Post, note: str = "") -> bool:
    """Show a hidden post again, whatever hid it."""
    with transaction.atomic():
        changed = (
            Post.objects.with_id(post.pk)
            .filter(hidden_at__isnull=False)
            .update(hidden_at=None, hidden_reason="")
        )
        if changed:
            _log(moderator=moderator, action=RESTORE_POST, post=post, user=post.author, note=note)
    return bool(changed)


def suspend_user(*, moderator: User, user: User, note: str = "") -> bool:
    """Suspend an account: no log-in, sessions end, every visible post hidden."""
    with transaction.atomic():
        changed = User.objects.filter(pk=user.pk, is_active=True).update(is_active=False)
        if not changed:
            return False
        # by_author is a primary-key range scan: no index on author needed.
        hidden = (
            Post.objects.by_author(user.pk)
            .visible()
            .update(hidden_at=timezone.now(), hidden_reason=Post.HiddenReason.SUSPENSION)
        )
        detail = f"{hidden} post(s) hidden"
        _log(
            moderator=moderator,
            action=SUSPEND_USER,
            user=user,
            note=f"{note} ({detail})" if note else detail,
        )
    user.is_active = False
    return True


def unsuspend_user(*, moderator: User, user: User, note: str = "") -> bool:
    """Let a suspended user back in; only the posts the suspension hid come back."""
    with transaction.atomic():
        changed = User.objects.filter(pk=user.pk, is_active=False).update(is_active=True)
        if not changed:
            return False
        restored = (
            Post.objects.by_author(user.pk)
            .filter(hidden_reason=Post.HiddenReason.SUSPENSION, deleted_at__isnull=True)
            .update(hidden_at=None, hidden_reason="")
        )
        detail = f"{restored} post(s) restored"
        _log(
            moderator=moderator,
            action=UNSUSPEND_USER,
            user=user,
            note=f"{note} ({detail})" if note else detail,
        )
    user.is_active = True
    return True


def reportable_post(*, reporter: User, post_id: str) -> Post:
    """The post ``reporter`` may report: NotFound when they may not see it (as for every
    other action on it), Invalid when it is their own (they can delete it instead)."""
    post = selectors.visible_post(viewer_id=reporter.pk, post_id=post_id)
    if post.author_id == reporter.pk:
        raise Invalid("You cannot report your own post.")
    return post


def reportable_person(*, reporter: User, username: str) -> User:
    """The person ``reporter`` may report: NotFound when there is no such active account
    or they are blocked either way (neither sees the other), Invalid for oneself."""
    person = unique_names.users_named(username).filter(is_active=True).first()
    if person is None:
        raise NotFound("No such person.")
    if person.pk == reporter.pk:
        raise Invalid("You cannot report yourself.")
    if is_blocked_either_way(reporter.pk, person.pk):
        raise NotFound("No such person.")
    return person


def report(*, reporter: User, user: User, post: Post | None = None, reason: str = "") -> Report:
    """File a report on a post (``user`` is its author) or on a profile.

    The same reporter reporting the same target again while it is open gets
    their open report back: nothing new is written.
    """
    with transaction.atomic():
        # Serialises two clicks of one reporter, so the duplicate check holds.
        User.objects.select_for_update(no_key=True).filter(pk=reporter.pk).first()
        target = Q(post=post) if post is not None else Q(post__isnull=True, user=user)
        existing = Report.objects.filter(
            target, reporter=reporter, status=Report.Status.OPEN
        ).first()
        if existing is not None:
            return existing
        return Report.objects.create(
            reporter=reporter,
            post=post,
            user=user,
            reason=reason[:500],
            created_at=timezone.now(),
        )


def resolve_report(*, moderator: User, report: Report, action: str, note: str = "") -> bool:
    """Work one report: hide its post, suspend its user, or dismiss it.

    Hiding a post or suspending a user closes the other open reports on that
    same post or user too. Returns False when the report was not open.
    """
    if action not in REPORT_ACTIONS:
        raise ValueError(f"unknown report action {action!r}")
    with transaction.atomic():
        report = Report.objects.select_for_update().get(pk=report.pk)
        if report.status != Report.Status.OPEN:
            return False
        note = note or f"report {report.pk}"
        if action == HIDE_POST:
            if report.post is None:
                raise ValueError("this report is about a profile, not a post")
            done = hide_post(moderator=moderator, post=report.post, note=note)
            closes = Report.objects.filter(post=report.post)
        elif action == SUSPEND_USER:
            done = suspend_user(moderator=moderator, user=report.user, note=note)
            closes = Report.objects.filter(user=report.user)
        else:
            done = False
            note = f"{note}: dismissed"
            closes = Report.objects.filter(pk=report.pk)
        if not done:
            # Dismissed, or already hidden or suspended by someone else: the
            # decision on the report is still an action, and logged.
            _log(
                moderator=moderator,
                action=action,
                post=report.post,
                user=report.user,
                note=note if action == DISMISS_REPORT else f"{note}: nothing left to do",
            )
        status = Report.Status.DISMISSED if action == DISMISS_REPORT else Report.Status.ACTIONED
        closes.filter(status=Report.Status.OPEN).update(
            status=status, resolved_at=timezone.now(), resolved_by=moderator, action=action
        )
    return True


def dismiss_report(*, moderator: User, report: Report, note: str = "") -> bool:
    return resolve_report(moderator=moderator, report=report, action=DISMISS_REPORT, note=note)


def post_to_open(
    *, user: User | AnonymousUser, post_id: str, missing: str = selectors.NO_SUCH_POST
) -> Post:
    """The post ``user`` may open (its page, its images): for a moderator any post not
    deleted, hidden or not, so that they can judge it; for anyone else a live post
    they may see (``selectors.visible_post``). Else NotFound(``missing``)."""
    if is_moderator(user):
        post = post_for_moderator(post_id)
        if post is not None:
            return post
    viewer_id = user.pk if user.is_authenticated else None
    return selectors.visible_post(viewer_id=viewer_id, post_id=post_id, missing=missing)


def post_for_moderator(post_id: str) -> Post | None:
    """A post a moderator may open: not deleted, hidden or not."""
    if not ids.is_timeline_key(post_id):
        return None
    return (
        Post.objects.with_id(post_id)
        .filter(deleted_at__isnull=True)
        .select_related("author")
        .first()
    )
