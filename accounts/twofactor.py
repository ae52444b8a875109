"""Two-factor authentication: TOTP (RFC 6238, pyotp) and single-use recovery codes.

Set-up: ``start_setup`` makes a secret (unconfirmed); the security page
shows it as a QR code (segno, an SVG data URI: no request leaves the site,
and the CSP allows ``data:`` images); ``confirm_setup`` takes a code from the
app, switches two-factor on and returns ten recovery codes, shown once.

A code is accepted for the 30-second step it belongs to, one step either
side for clock drift, and only if that step is later than the last one
accepted (``TwoFactor.last_step``, moved with a conditional UPDATE so two
requests racing with one code cannot both win): a code works once.

Recovery codes have 80 random bits, so a SHA-256 of each is enough to store
(a slow hash guards guessable secrets; these are not); one is spent with a
conditional UPDATE, so it too works once.
"""

import hashlib
import hmac
import re
import secrets
from datetime import datetime

import pyotp
import segno
from django.db import transaction
from django.utils import timezone

from accounts.models import RecoveryCode, TwoFactor, User

ISSUER = "Feed"
STEP_SECONDS = 30
DRIFT_STEPS = 1
RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no 0/o, 1/l: read off paper
_RECOVERY_LENGTH = 16  # 16 letters of 32: 80 bits


def is_enabled(user: User) -> bool:
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=False).exists()


def pending_setup(user: User) -> TwoFactor | None:
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=True).first()


def start_setup(*, user: User) -> TwoFactor:
    """A new unconfirmed secret for ``user`` (replacing an unconfirmed one)."""
    with transaction.atomic():
        TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=True).delete()
        return TwoFactor.objects.create(
            user=user, secret=pyotp.random_base32(), created_at=timezone.now()
        )


def provisioning_uri(*, user: User, secret: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=user.username, issuer_name=ISSUER)


def qr_code_data_uri(uri: str) -> str:
    """The QR code of ``uri`` as an SVG ``data:`` URI, drawn here."""
    return segno.make(uri, error="m").svg_data_uri(scale=5, border=2)


def _clean_totp(code: str) -> str | None:
    code = re.sub(r"\s", "", code)
    return code if re.fullmatch(r"[0-9]{6}", code) else None


def _accept_totp(*, user: User, code: str, confirmed: bool, now: datetime | None) -> bool:
    clean = _clean_totp(code)
    if clean is None:
        return False
    record = TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=not confirmed).first()
    if record is None:
        return False
    totp = pyotp.TOTP(record.secret)
    current = int((now or timezone.now()).timestamp()) // STEP_SECONDS
    for step in range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1):
        if step > record.last_step and hmac.compare_digest(totp.generate_otp(step), clean):
            return bool(
                TwoFactor.objects.filter(user_id=user.pk, last_step__lt=step).update(last_step=step)
            )
    return False


def verify(*, user: User, code: str, now: datetime | None = None) -> bool:
    """A TOTP code for the log-in of ``user`` (two-factor on); a code works once."""
    return _accept_totp(user=user, code=code, confirmed=True, now=now)


def confirm_setup(*, user: User, code: str, now: datetime | None = None) -> list[str] | None:
    """Switch two-factor on if ``code`` fits the pending secret; the new recovery codes."""
    with transaction.atomic():
        if not _accept_totp(user=user, code=code, confirmed=False, now=now):
            return None
        TwoFactor.objects.filter(user_id=user.pk).update(confirmed_at=timezone.now())
        return new_recovery_codes(user=user)


def _digest(code: str) -> str:
    clean = re.sub(r"[\s-]", "", code).lower()
    return hashlib.sha256(clean.encode()).hexdigest()


def new_recovery_codes(*, user: User) -> list[str]:
    """Ten fresh recovery codes (the old ones stop working); only their digests are kept."""
    codes = [
        "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(_RECOVERY_LENGTH))
        for _ in range(RECOVERY_CODES)
    ]
    with transaction.atomic():
        RecoveryCode.objects.filter(user_id=user.pk).delete()
        RecoveryCode.objects.bulk_create(
            [RecoveryCode(user=user, digest=_digest(code)) for code in codes]
        )
    return ["-".join(code[i : i + 4] for i in range(0, len(code), 4)) for code in codes]


def use_recovery_code(*, user: User, code: str) -> bool:
    """Spend one recovery code of ``user``; False if it is not one, or was used."""
    if len(code) > 64 or not is_enabled(user):
        return False
    return bool(
        RecoveryCode.objects.filter(
            user_id=user.pk, digest=_digest(code), used_at__isnull=True
        ).update(used_at=timezone.now())
    )


def recovery_codes_left(user: User) -> int:
    return RecoveryCode.objects.filter(user_id=user.pk, used_at__isnull=True).count()


def disable(*, user: User) -> None:
    with transaction.atomic():
        RecoveryCode.objects.filter(user_id=user.pk).delete()
        TwoFactor.objects.filter(user_id=user.pk).delete()


def check_code(*, user: User, code: str) -> bool:
    """The log-in's second step: a TOTP code, or else a recovery code."""
    if _clean_totp(code) is not None:
        return verify(user=user, code=code)
    return use_recovery_code(user=user, code=code)
