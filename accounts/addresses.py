"""E-mail addresses of accounts: claiming one, verification links, confirming, changing.

A user's ``email`` is where mail goes; it is unique case-insensitively.
An address asked for but not yet proven (a change, or a sign-up with an
address some other account has) waits in ``unconfirmed_email`` and replaces
``email`` only when the link mailed to it is followed. So no page ever says
whether an address is registered: sign-up and change answer alike, and only
the mailbox's owner reads which mail came.

The links themselves are accounts.tokens'.
"""

import enum

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from accounts.tasks import enqueue_on_commit, send_address_in_use_mail, send_verification_mail


class Outcome(enum.Enum):
    VERIFIED = "verified"
    ALREADY = "already"  # the address was verified before
    TAKEN = "taken"  # another account took the address meanwhile
    STALE = "stale"  # the account's address has changed since the link was sent


def normalize(address: str) -> str:
    return User.objects.normalize_email(address.strip())


def may_post(user: User) -> bool:
    """Whether ``user`` may post: yes, unless REQUIRE_EMAIL_VERIFICATION wants a proven address."""
    return not settings.REQUIRE_EMAIL_VERIFICATION or user.email_verified


def claim(*, user: User, address: str, base_url: str) -> None:
    """Give a new account ``address``; mail its link, or, if it is taken, a notice to it.

    Call inside the sign-up's transaction. The page after sign-up is the
    same either way; the mailbox's owner reads which mail it was.
    """
    try:
        with transaction.atomic():  # losing to the address's claim spoils only this
            User.objects.filter(pk=user.pk).update(email=address)
            unique_names.take_email(user_id=user.pk, address=address)
    except IntegrityError:
        User.objects.filter(pk=user.pk).update(unconfirmed_email=address)
        user.unconfirmed_email = address
        enqueue_on_commit(send_address_in_use_mail, address, base_url)
        return
    user.email = address
    enqueue_on_commit(send_verification_mail, user.pk, address, base_url)


def request_change(*, user: User, address: str, base_url: str) -> None:
    """Ask to move ``user`` to ``address``: it takes effect when its link is followed."""
    if address.lower() == user.email.lower():
        # Back to the address in place: forget a pending change; re-send if unproven.
        User.objects.filter(pk=user.pk).update(unconfirmed_email="")
        user.unconfirmed_email = ""
        if not user.email_verified:
            enqueue_on_commit(send_verification_mail, user.pk, user.email, base_url)
        return
    User.objects.filter(pk=user.pk).update(unconfirmed_email=address)
    user.unconfirmed_email = address
    enqueue_on_commit(send_verification_mail, user.pk, address, base_url)


def resend(*, user: User, base_url: str) -> bool:
    """Mail the link again for the address waiting to be proven; False if none is."""
    address = user.unconfirmed_email or ("" if user.email_verified else user.email)
    if not address:
        return False
    enqueue_on_commit(send_verification_mail, user.pk, address, base_url)
    return True


def confirm(*, user_id: int, address: str) -> Outcome:
    """Follow a verification link: prove ``email``, or move to ``unconfirmed_email``."""
    with transaction.atomic():
        user = User.objects.select_for_update(no_key=True).filter(pk=user_id).first()
        if user is None:
            return Outcome.STALE
        now = timezone.now()
        if user.email and user.email.lower() == address:
            if user.email_verified_at is not None:
                return Outcome.ALREADY
            User.objects.filter(pk=user.pk).update(email_verified_at=now)
            return Outcome.VERIFIED
        if user.unconfirmed_email and user.unconfirmed_email.lower() == address:
            try:
                with transaction.atomic():
                    User.objects.filter(pk=user.pk).update(
                        email=user.unconfirmed_email, unconfirmed_email="", email_verified_at=now
                    )
                    unique_names.release_email(user_id=user.pk, address=user.email)
                    unique_names.take_email(user_id=user.pk, address=user.unconfirmed_email)
            except IntegrityError:
                return Outcome.TAKEN
            return Outcome.VERIFIED
    return Outcome.STALE
