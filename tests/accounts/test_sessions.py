"""The sessions page: each signed-in session listed, ended one by one or all but this one."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts import sessions
from accounts.models import UserSession
from tests.conftest import PASSWORD

FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)


def _log_in(agent: str, ip: str) -> Client:
    client = Client(HTTP_USER_AGENT=agent, REMOTE_ADDR=ip)
    assert (
        client.post("/accounts/login/", {"username": "alice", "password": PASSWORD}).status_code
        == 302
    )
    return client


def test_the_page_lists_each_session_with_device_ip_and_last_seen(alice):
    laptop = _log_in(FIREFOX, "192.0.2.10")
    _log_in(IPHONE, "198.51.100.7")
    page = laptop.get("/settings/security/").content.decode()
    assert "Firefox on Windows, 192.0.2.10" in page
    assert "Safari on iPhone, 198.51.100.7" in page
    assert "(this one)" in page
    assert laptop.session.session_key not in page  # the cookie's value is never shown


def test_log_out_one_other_session(alice):
    laptop = _log_in(FIREFOX, "192.0.2.10")
    phone = _log_in(IPHONE, "198.51.100.7")
    phone_id = sessions.digest(phone.session.session_key)
    response = laptop.post("/settings/security/sessions/end/", {"session": phone_id})
    assert response.status_code == 302
    assert not phone.get("/").context["user"].is_authenticated
    assert laptop.get("/").context["user"].is_authenticated


def test_log_out_everywhere_else(alice):
    clients = [_log_in(FIREFOX, f"192.0.2.{n}") for n in range(3)]
    assert clients[0].post("/settings/security/sessions/end-others/").status_code == 302
    assert clients[0].get("/").context["user"].is_authenticated
    assert [c.get("/").context["user"].is_authenticated for c in clients[1:]] == [False, False]
    assert UserSession.objects.filter(user_id=alice.pk).count() == 1


def test_this_session_cannot_be_ended_from_its_own_list(alice):
    laptop = _log_in(FIREFOX, "192.0.2.10")
    this = sessions.digest(laptop.session.session_key)
    laptop.post("/settings/security/sessions/end/", {"session": this})
    assert laptop.get("/").context["user"].is_authenticated


def test_log_out_removes_the_row(alice):
    client = _log_in(FIREFOX, "192.0.2.10")
    client.post("/accounts/logout/")
    assert not UserSession.objects.filter(user_id=alice.pk).exists()


def test_last_seen_is_written_at_most_every_few_minutes(alice, django_assert_num_queries):
    client = _log_in(FIREFOX, "192.0.2.10")
    row = UserSession.objects.get(user_id=alice.pk)
    long_ago = timezone.now() - timedelta(hours=1)
    UserSession.objects.filter(user_id=alice.pk).update(last_seen_at=long_ago)
    client.get("/settings/security/")
    row.refresh_from_db()
    assert row.last_seen_at == long_ago  # within the interval: no write

    session = client.session
    session[sessions.SEEN_SESSION_KEY] -= 3600
    session.save()
    client.get("/settings/security/")
    row.refresh_from_db()
    assert row.last_seen_at > long_ago


def test_a_session_from_before_recording_appears_when_seen(alice, alice_client):
    UserSession.objects.filter(user_id=alice.pk).delete()
    session = alice_client.session
    session.pop(sessions.SEEN_SESSION_KEY, None)
    session.save()
    alice_client.get("/")
    assert UserSession.objects.filter(user_id=alice.pk).count() == 1


@pytest.mark.parametrize(
    ("agent", "device"),
    [
        (FIREFOX, "Firefox on Windows"),
        (IPHONE, "Safari on iPhone"),
        (
            "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/126.0 Mobile Safari/537.36",
            "Chrome on Android",
        ),
        ("curl/8.5.0", "curl"),
        ("", "Unknown device"),
    ],
)
def test_device_names(agent, device):
    assert sessions.device_name(agent) == device
