"""Verification links: ``signing.dumps((user id, address))``.

Signed with SECRET_KEY, expiring after ``EMAIL_VERIFICATION_MAX_AGE_SECONDS``,
and naming the address, so a link to an old address stops working once the
address changes. (Password-reset links are Django's own tokens.)
"""

from django.conf import settings
from django.core import signing

SALT = "accounts.addresses.verification"


def verification_token(*, user_id: int, address: str) -> str:
    return signing.dumps([user_id, address.lower()], salt=SALT)


def read_verification_token(token: str) -> tuple[int, str] | None:
    """The (user id, address) a link names, or None if it is forged, mangled or expired."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.EMAIL_VERIFICATION_MAX_AGE_SECONDS)
    except (signing.BadSignature, ValueError, UnicodeError):
        return None
    if (
        not isinstance(data, list)
        or len(data) != 2
        or not isinstance(data[0], int)
        or isinstance(data[0], bool)
        or not isinstance(data[1], str)
    ):
        return None
    return data[0], data[1]
