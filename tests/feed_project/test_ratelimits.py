"""Rate limits: over the rate a request is refused with a friendly 429 and Retry-After."""

import re
from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import User
from posts.models import Post
from posts.services import create_post
from relations.models import Followee
from tests.conftest import PASSWORD
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RATES = {
    # Per day: the counters are fixed windows, and a test that straddled a
    # window's end would see its count start again (per minute, one run in a
    # few dozen did).
    "post": ("3/d", "5/d"),
    "follow": ("3/d", "5/d"),
    "like": ("3/d", "5/d"),
    "signup": ("", "2/d"),
    "login": ("3/d", "5/d"),
}


@pytest.fixture(autouse=True)
def _limits_on():
    """The suite runs with RATELIMIT_ENABLED=0: these tests switch small limits on."""
    with override_settings(RATELIMIT_ENABLED=True, RATELIMIT_RATES=RATES):
        cache.clear()
        yield


def _post_text(client: Client, n: int) -> int:
    return client.post(reverse("posts:new"), {"text": f"post {n}"}).status_code


def test_posting_over_the_user_rate_is_a_429_with_retry_after_and_writes_nothing(alice_client):
    assert [_post_text(alice_client, n) for n in range(3)] == [302, 302, 302]
    response = alice_client.post(reverse("posts:new"), {"text": "one too many"})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 86_400  # the rest of the day's window
    assert b"Slow down" in response.content
    assert re.search(r"\d+ seconds?|about \d+ minutes", response.content.decode())
    assert Post.objects.count() == 3


def test_a_limit_is_per_user(alice_client, carol):
    for n in range(3):
        _post_text(alice_client, n)
    assert _post_text(alice_client, 3) == 429
    other = Client(REMOTE_ADDR="10.0.0.2")
    other.force_login(carol)
    assert _post_text(other, 0) == 302


def test_a_limit_is_per_ip_across_users(db):
    users = [UserFactory() for _ in range(3)]
    statuses = []
    for user in users:
        client = Client(REMOTE_ADDR="192.0.2.7")
        client.force_login(user)
        statuses += [_post_text(client, n) for n in range(2)]
    # Five posts per minute from one address, whoever is signed in.
    assert statuses == [302] * 5 + [429]


def test_ipv6_addresses_of_one_network_share_a_limit(db):
    users = [UserFactory() for _ in range(6)]
    statuses = []
    for n, user in enumerate(users):
        client = Client(REMOTE_ADDR=f"2001:db8:1:2::{n + 1}")
        client.force_login(user)
        statuses.append(_post_text(client, n))
    assert statuses == [302] * 5 + [429]


def test_follow_and_unfollow_share_the_follow_limit(alice, alice_client, carol):
    url_follow = reverse("relations:follow", args=["carol"])
    url_unfollow = reverse("relations:unfollow", args=["carol"])
    statuses = [alice_client.post(url).status_code for url in (url_follow, url_unfollow) * 2]
    assert statuses == [302, 302, 302, 429]
    # The third request (follow) went through, the fourth (unfollow) did not.
    assert Followee.objects.filter(user=alice.pk, followee=carol.pk).exists()


def test_signup_is_limited_per_ip():
    client = Client(REMOTE_ADDR="198.51.100.9")
    statuses = []
    for n in range(3):
        client.logout()
        data = {
            "username": f"newbie{n}",
            "email": f"newbie{n}@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
        }
        statuses.append(client.post(reverse("accounts:signup"), data).status_code)
    assert statuses == [302, 302, 429]
    assert User.objects.filter(username__startswith="newbie").count() == 2


def test_showing_the_signup_and_login_forms_is_never_limited():
    client = Client()
    for _ in range(10):
        assert client.get(reverse("accounts:signup")).status_code == 200
        assert client.get(reverse("accounts:login")).status_code == 200


def test_login_is_limited_per_username_tried_from_many_addresses(alice):
    statuses = []
    for n in range(4):
        client = Client(REMOTE_ADDR=f"203.0.113.{n + 1}")
        data = {"username": "ALICE", "password": "wrong-guess"}
        statuses.append(client.post(reverse("accounts:login"), data).status_code)
    assert statuses == [200, 200, 200, 429]
    # The right password is refused too until the window ends: that is the point.
    client = Client(REMOTE_ADDR="203.0.113.99")
    response = client.post(reverse("accounts:login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


LONG_S, DOTLESS_I = "\u017f", "\u0131"  # PostgreSQL's UPPER() makes them S and I
FULL_WIDTH_ALICE = "".join(chr(ord(letter) + 0xFEE0) for letter in "alice")


@pytest.mark.parametrize("look_alike", [f"AL{DOTLESS_I}CE", f"al{DOTLESS_I}ce", FULL_WIDTH_ALICE])
def test_look_alike_usernames_share_the_accounts_budget_and_never_sign_in(alice, look_alike):
    statuses = []
    for n, username in enumerate(["alice", "ALICE", "alice", look_alike]):
        client = Client(REMOTE_ADDR=f"203.0.113.{n + 1}")
        data = {"username": username, "password": "wrong-guess"}
        statuses.append(client.post(reverse("accounts:login"), data).status_code)
    assert statuses == [200, 200, 200, 429]
    client = Client(REMOTE_ADDR="203.0.113.99")
    data = {"username": look_alike, "password": PASSWORD}
    assert client.post(reverse("accounts:login"), data).status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_long_s_look_alike_spends_the_budget_of_the_real_name(db):
    """Two long s once signed in as kass with a fresh budget of guesses."""
    UserFactory(username="kass")
    statuses = []
    for n, username in enumerate([f"ka{LONG_S}{LONG_S}", "KASS", f"ka{LONG_S}s", "kass"]):
        client = Client(REMOTE_ADDR=f"203.0.113.{n + 1}")
        data = {"username": username, "password": "wrong-guess"}
        statuses.append(client.post(reverse("accounts:login"), data).status_code)
    assert statuses == [200, 200, 200, 429]


def test_limits_are_off_with_ratelimit_enabled_false(alice_client):
    with override_settings(RATELIMIT_ENABLED=False):
        assert {_post_text(alice_client, n) for n in range(8)} == {302}


def test_a_rate_left_empty_is_no_limit(alice_client):
    rates = {**RATES, "post": ("", "")}
    with override_settings(RATELIMIT_RATES=rates):
        assert {_post_text(alice_client, n) for n in range(8)} == {302}


def test_a_cache_that_fails_lets_requests_through(alice_client):
    """Redis down: the cache (IGNORE_EXCEPTIONS) answers None, and the limit fails open."""
    from django_ratelimit import core

    broken = mock.MagicMock()
    broken.add.return_value = None
    broken.incr.return_value = None
    with mock.patch.object(core, "caches", {"default": broken}):
        assert {_post_text(alice_client, n) for n in range(6)} == {302}
    assert broken.incr.called


@pytest.mark.cache_outage
def test_a_redis_that_is_down_fails_open(alice_client, settings):
    """A real django-redis cache pointed at a closed port: posting still works."""
    closed = "redis+cluster://127.0.0.1:9" if settings.REDIS_CLUSTER else "redis://127.0.0.1:9/0"
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "LOCATION": [closed]},
    }
    assert {_post_text(alice_client, n) for n in range(5)} == {302}


@pytest.mark.parametrize("value", ["20/m", "5/10m", "100/h", "1/d", ""])
def test_settings_accept_rates(monkeypatch, value):
    from feed_project import settings as settings_module

    monkeypatch.setenv("RATELIMIT_POST", value)
    assert settings_module._rate("RATELIMIT_POST", "30/m") == value


@pytest.mark.parametrize("value", ["fast", "20", "0/m", "20/x", "20 per minute"])
def test_settings_refuse_a_malformed_rate_naming_the_variable(monkeypatch, value):
    from django.core.exceptions import ImproperlyConfigured

    from feed_project import settings as settings_module

    monkeypatch.setenv("RATELIMIT_POST", value)
    with pytest.raises(ImproperlyConfigured, match="RATELIMIT_POST"):
        settings_module._rate("RATELIMIT_POST", "30/m")


def test_blocks_and_mutes_count_towards_the_follow_limit(alice_client, carol):
    paths = ["block", "unblock", "mute", "unmute"]
    statuses = [
        alice_client.post(reverse(f"relations:{path}", args=["carol"])).status_code
        for path in paths
    ]
    assert statuses == [302, 302, 302, 429]


def test_likes_and_reposts_share_the_like_limit(alice_client, carol):
    post = create_post(author=carol, text="popular")
    paths = ["like", "repost", "unlike", "unrepost"]
    statuses = [
        alice_client.post(reverse(f"posts:{path}", args=[post.pk])).status_code for path in paths
    ]
    assert statuses == [302, 302, 302, 429]
    assert Post.objects.filter(repost_of=post, deleted_at__isnull=True).count() == 1


# --- The client's address behind proxies (TRUSTED_PROXIES) --------------------


def _address(trusted, remote_addr: str, forwarded_for: str | None = None) -> str:
    from django.test import RequestFactory

    from feed_project.ratelimits import client_ip

    meta = {"REMOTE_ADDR": remote_addr}
    if forwarded_for is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded_for
    with override_settings(TRUSTED_PROXIES=trusted):
        return client_ip(RequestFactory().post("/", **meta))


def _networks(*texts: str):
    import ipaddress

    return tuple(ipaddress.ip_network(text) for text in texts)


def test_with_no_trusted_proxy_x_forwarded_for_is_ignored():
    assert _address(0, "192.0.2.1", "198.51.100.5") == "192.0.2.1"


@pytest.mark.parametrize("trusted", [1, _networks("10.0.0.0/8")])
def test_behind_one_proxy_the_client_is_the_hop_it_appended(trusted):
    assert _address(trusted, "10.0.0.2", "198.51.100.5") == "198.51.100.5"


@pytest.mark.parametrize("trusted", [1, _networks("10.0.0.2")])
def test_a_spoofed_leftmost_address_is_ignored(trusted):
    # The client sent "X-Forwarded-For: 203.0.113.66"; the proxy appended the real peer.
    assert _address(trusted, "10.0.0.2", "203.0.113.66, 198.51.100.5") == "198.51.100.5"


def test_a_count_of_two_proxies_skips_two_hops():
    forwarded = "203.0.113.66, 198.51.100.5, 10.0.0.9"
    assert _address(2, "10.0.0.2", forwarded) == "198.51.100.5"


def test_a_list_of_proxies_walks_left_past_every_one_of_them():
    trusted = _networks("10.0.0.0/8", "2001:db8:ffff::/48")
    forwarded = "203.0.113.66, 198.51.100.5, 10.1.2.3, 2001:db8:ffff::7"
    assert _address(trusted, "::ffff:10.0.0.2", forwarded) == "198.51.100.5"


def test_a_request_from_a_trusted_address_itself_is_not_read_through_a_missing_header():
    assert _address(1, "10.0.0.2") == "10.0.0.2"
    assert _address(_networks("10.0.0.0/8"), "10.0.0.2") == "10.0.0.2"


def test_a_request_sent_straight_to_the_site_cannot_name_its_own_address():
    """Not from a listed proxy: REMOTE_ADDR is the client, whatever the header says."""
    assert _address(_networks("10.0.0.0/8"), "192.0.2.1", "198.51.100.5") == "192.0.2.1"


def test_spoofed_addresses_behind_a_proxy_share_the_real_clients_limit(alice):
    statuses = []
    with override_settings(TRUSTED_PROXIES=1):
        for n in range(6):
            client = Client(
                REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}, 192.0.2.50"
            )
            data = {"username": f"nobody{n}", "password": "wrong-guess"}
            statuses.append(client.post(reverse("accounts:login"), data).status_code)
    assert statuses == [200] * 5 + [429]  # five per IP (RATES), one real client


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", 0),
        ("0", 0),
        ("1", 1),
        (" 2 ", 2),
        ("10.0.0.0/8", ("10.0.0.0/8",)),
        ("192.0.2.7, 2001:db8::/32", ("192.0.2.7/32", "2001:db8::/32")),
    ],
)
def test_settings_read_trusted_proxies_as_a_count_or_a_list(monkeypatch, value, expected):
    from feed_project import settings as settings_module

    monkeypatch.setenv("TRUSTED_PROXIES", value)
    read = settings_module._trusted_proxies("TRUSTED_PROXIES")
    assert read == expected if isinstance(expected, int) else tuple(map(str, read)) == expected


@pytest.mark.parametrize("value", ["-1", "one", "10.0.0.0/33", "10.0.0.1,", "10.0.0.1/8"])
def test_settings_refuse_malformed_trusted_proxies_naming_the_variable(monkeypatch, value):
    from django.core.exceptions import ImproperlyConfigured

    from feed_project import settings as settings_module

    monkeypatch.setenv("TRUSTED_PROXIES", value)
    with pytest.raises(ImproperlyConfigured, match="TRUSTED_PROXIES"):
        settings_module._trusted_proxies("TRUSTED_PROXIES")
