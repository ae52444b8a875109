"""The mails accounts sends, rendered and sent by the tasks (accounts.tasks).

Each function loads what it needs by id: when the account changed between
the request and the worker (a new address, verified already, gone), it sends
nothing. ``base_url`` is the site's scheme and host as the request saw it
(validated against ALLOWED_HOSTS), as Django's own reset mails do.
"""

from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts import unique_names
from accounts.models import User
from accounts.tokens import verification_token


def _send(template: str, to: str, context: dict[str, object]) -> None:
    subject = render_to_string(f"accounts/mail/{template}_subject.txt", context)
    body = render_to_string(f"accounts/mail/{template}.txt", context)
    send_mail(" ".join(subject.split()), body, None, [to])


def send_verification(*, user_id: int, address: str, base_url: str) -> bool:
    user = User.objects.filter(pk=user_id).first()  # awaiting approval too: inactive
    if user is None:
        return False
    waiting = {user.unconfirmed_email.lower()}
    if not user.email_verified:
        waiting.add(user.email.lower())
    if address.lower() not in waiting - {""}:
        return False  # the address changed, or was proven, since the task was queued
    token = verification_token(user_id=user.pk, address=address)
    link = base_url + reverse("accounts:verify_email", args=[token])
    _send("verify", address, {"user": user, "link": link})
    return True


def send_address_in_use(*, address: str, base_url: str) -> bool:
    """Someone signed up with an address an account already has: tell its owner."""
    owner = unique_names.users_with_email(address).first()
    if owner is None:
        return False
    context = {
        "login": base_url + reverse("accounts:login"),
        "reset": base_url + reverse("accounts:password_reset"),
    }
    _send("address_in_use", owner.email, context)
    return True


def send_password_reset(*, user_id: int, base_url: str) -> bool:
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or not user.email or not user.has_usable_password():
        return False
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    link = base_url + reverse("accounts:password_reset_confirm", args=[uid, token])
    _send("password_reset", user.email, {"user": user, "link": link})
    return True


def send_approved(*, user_id: int, base_url: str) -> bool:
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or not user.email:
        return False
    _send("approved", user.email, {"user": user, "login": base_url + reverse("accounts:login")})
    return True
