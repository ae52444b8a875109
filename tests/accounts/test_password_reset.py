"""Password reset by e-mail (real SMTP), no account enumeration, sessions ended."""

import statistics
import time

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from accounts.models import UserSession
from tests.conftest import PASSWORD
from tests.factories import set_email

RESET = "/accounts/password/reset/"
NEW = "a-brand-new-passphrase-42"


@pytest.fixture
def alice_with_email(alice):
    set_email(alice, "alice@example.com")
    alice.refresh_from_db()
    return alice


def test_reset_by_mail_end_to_end_ends_every_session(
    alice_with_email, mailbox, django_capture_on_commit_callbacks
):
    signed_in = Client()
    signed_in.force_login(alice_with_email)
    assert UserSession.objects.filter(user_id=alice_with_email.pk).count() == 1

    with django_capture_on_commit_callbacks(execute=True):
        response = Client().post(RESET, {"email": "ALICE@example.com"})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/reset/sent/"
    mail = mailbox.wait_for("alice@example.com")
    assert mail["Subject"] == "Set a new password"
    link = mailbox.link(mail)

    visitor = Client()
    form = visitor.get(link, follow=True)
    assert form.status_code == 200
    assert b'name="new_password1"' in form.content
    set_password = form.redirect_chain[-1][0]
    bad = visitor.post(set_password, {"new_password1": NEW, "new_password2": NEW + "x"})
    assert bad.status_code == 400
    done = visitor.post(set_password, {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302
    assert done["Location"] == "/accounts/password/reset/done/"

    alice_with_email.refresh_from_db()
    assert alice_with_email.check_password(NEW)
    assert not signed_in.get("/").context["user"].is_authenticated
    assert not UserSession.objects.filter(user_id=alice_with_email.pk).exists()
    assert Client().get(link, follow=True).context["validlink"] is False  # used once


def _answer(address: str):
    response = Client().post(RESET, {"email": address})
    page = Client().get(response["Location"])
    return response.status_code, response["Location"], page.content


def test_the_answer_is_the_same_for_known_and_unknown_addresses(alice_with_email, mailbox):
    known = _answer("alice@example.com")
    unknown = _answer("nobody@example.com")
    assert known == unknown


def test_no_timing_gap_between_known_and_unknown_addresses(alice_with_email, settings):
    """The median of 15 tries each differs by under 50 ms (the mail is a task, not here)."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

    def median(address: str) -> float:
        times = []
        for _ in range(15):
            start = time.perf_counter()
            Client().post(RESET, {"email": address})
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    assert abs(median("alice@example.com") - median("nobody@example.com")) < 0.05


def test_a_malformed_address_is_shown_again_with_its_error(db):
    response = Client().post(RESET, {"email": "not an address"})
    assert response.status_code == 400
    assert "email" in response.context["form"].errors


@override_settings(
    RATELIMIT_ENABLED=True,
    RATELIMIT_RATES={"password_reset": ("2/d", "5/d")},
)
def test_reset_is_rate_limited_per_address(alice_with_email):
    cache.clear()
    statuses = [Client().post(RESET, {"email": "alice@example.com"}).status_code for _ in range(3)]
    assert statuses == [302, 302, 429]
    other = Client().post(RESET, {"email": "other@example.com"})
    assert other.status_code == 302


def test_changing_the_password_keeps_this_session_and_ends_the_others(alice):
    here, there = Client(), Client()
    here.force_login(alice)
    there.force_login(alice)
    response = here.post(
        "/settings/security/password/",
        {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW},
    )
    assert response.status_code == 302
    assert here.get("/").context["user"].is_authenticated
    assert not there.get("/").context["user"].is_authenticated
    rows = UserSession.objects.filter(user_id=alice.pk)
    assert list(rows.values_list("session_key", flat=True)) == [here.session.session_key]


def test_a_wrong_old_password_changes_nothing(alice_client, alice):
    response = alice_client.post(
        "/settings/security/password/",
        {"old_password": "wrong", "new_password1": NEW, "new_password2": NEW},
    )
    assert response.status_code == 400
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)
