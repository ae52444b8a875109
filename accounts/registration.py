"""Who may sign up, and how: the registration mode, invite links, applications.

The mode is one of open, approval (the account stays inactive until a
moderator approves it in the admin, reading the applicant's reason), invite
(a valid invite link is needed) and closed. An operator switches it in the
admin (``RegistrationSetting``, one row); with no row, ``REGISTRATION_MODE``
(settings, from the environment) applies.
"""

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts import addresses
from accounts.models import Invite, RegistrationSetting, SignupApplication, User
from accounts.tasks import enqueue_on_commit, send_approved_mail
from feed_project.refusals import Forbidden

INVITE_PERMISSION = "accounts.add_invite"
INVITE_MAX_DAYS = 30
INVITE_MAX_USES = 100


class InviteUsedUp(Exception):
    """The invite expired or ran out of uses between the form and the write."""


def mode() -> str:
    """The admin's choice if one is saved, else the ``REGISTRATION_MODE`` setting."""
    chosen = RegistrationSetting.objects.filter(pk=1).values_list("mode", flat=True).first()
    return chosen or settings.REGISTRATION_MODE


class SignupClosed(Forbidden):
    """No sign-up now: the mode is closed, or invite and the link is not good (any more)."""

    def __init__(self, mode: str) -> None:
        super().__init__(
            "Sign-up is by invitation: this invite link has expired, been used up or is wrong."
            if mode == "invite"
            else "Sign-up is closed."
        )
        self.mode = mode


def check_signup_open(*, mode: str, invite_token: str | None = None) -> None:
    """SignupClosed when no one may sign up in ``mode``, or when it is invite and
    ``invite_token`` names no usable invite (None: the form checks its own invite)."""
    if mode == "closed":
        raise SignupClosed(mode)
    if mode == "invite" and invite_token is not None and usable_invite(invite_token) is None:
        raise SignupClosed(mode)


def parse_invite_token(token: str) -> tuple[int, str] | None:
    user_id, dot, code = token.strip().partition(".")
    if not dot or not user_id.isascii() or not user_id.isdigit() or len(user_id) > 18:
        return None
    if not re.fullmatch(r"[A-Za-z0-9_-]{8,32}", code):
        return None
    return int(user_id), code


def usable_invite(token: str, *, now: datetime | None = None) -> Invite | None:
    """The invite a link names, if it has not expired or run out; a primary-key lookup."""
    parsed = parse_invite_token(token)
    if parsed is None:
        return None
    now = now or timezone.now()
    return (
        Invite.objects.filter(
            user_id=parsed[0], code=parsed[1], expires_at__gt=now, uses__lt=F("max_uses")
        )
        .select_related("user")
        .first()
    )


def may_invite(user: User) -> bool:
    """Whether ``user`` may make invite links: the permission an operator gives."""
    return user.has_perm(INVITE_PERMISSION)


def check_may_invite(*, user: User) -> None:
    """Forbidden unless ``user`` may make invite links (``may_invite``): in invite mode
    a link is an account, so only those given the permission hand them out."""
    if not may_invite(user):
        raise Forbidden("You may not make invite links.")


def create_invite(*, user: User, days: int, max_uses: int) -> Invite:
    now = timezone.now()
    return Invite.objects.create(
        user=user,
        code=secrets.token_urlsafe(12),
        created_at=now,
        expires_at=now + timedelta(days=days),
        max_uses=max_uses,
    )


def invites_of(user: User) -> list[Invite]:
    return list(Invite.objects.filter(user=user).order_by("-created_at")[:50])


@dataclass(frozen=True)
class Signup:
    username: str
    password: str
    email: str
    display_name: str = ""
    reason: str = ""
    invite: Invite | None = None
    time_zone: str = ""  # an IANA zone the form checked, or "" (the site's)


def register(*, signup: Signup, base_url: str) -> User:
    """Create the account the sign-up form asked for, in the current registration mode.

    Raises IntegrityError when the username was taken meanwhile and
    InviteUsedUp when the invite ran out meanwhile: the caller's savepoint
    then undoes everything.
    """
    approval = mode() == "approval"
    with transaction.atomic():
        user = User.objects.create_user(
            username=signup.username,
            password=signup.password,
            display_name=signup.display_name,
            is_active=not approval,
            time_zone=signup.time_zone,
        )
        if signup.invite is not None:
            invite = signup.invite
            used = Invite.objects.filter(
                user_id=invite.user_id,
                code=invite.code,
                expires_at__gt=timezone.now(),
                uses__lt=F("max_uses"),
            ).update(uses=F("uses") + 1)
            if not used:
                raise InviteUsedUp
        if approval:
            SignupApplication.objects.create(
                user=user, reason=signup.reason, created_at=timezone.now()
            )
        addresses.claim(user=user, address=signup.email, base_url=base_url)
    return user


def decide(
    *, application: SignupApplication, moderator: User, approve: bool, base_url: str
) -> bool:
    """Approve (activate the account) or reject an application; False if already decided."""
    with transaction.atomic():
        decided = SignupApplication.objects.filter(
            user_id=application.user_id, decided_at__isnull=True
        ).update(decided_at=timezone.now(), approved=approve, decided_by=moderator)
        if not decided:
            return False
        if approve:
            User.objects.filter(pk=application.user_id).update(is_active=True)
            enqueue_on_commit(send_approved_mail, application.user_id, base_url)
    return True
