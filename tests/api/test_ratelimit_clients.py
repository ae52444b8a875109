"""Mastodon.py reads the rate limit headers as a real app does: what is left, when the
window ends (its "pace" mode needs a usable reset time), and a 429 past the budget."""

import time

import pytest
from mastodon import Mastodon
from mastodon.errors import MastodonRatelimitError

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def token(settings, make_token):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "api": ("3/5m", "3/5m")}
    return make_token(UserFactory(username="counted"), "read")


def test_mastodon_py_reads_the_limit_and_stops_at_it(live_server, token):
    client = Mastodon(access_token=token, api_base_url=live_server.url, ratelimit_method="throw")
    for left in (2, 1, 0):
        assert client.account_verify_credentials()["username"] == "counted"
        assert (client.ratelimit_limit, client.ratelimit_remaining) == (3, left)
        assert time.time() < client.ratelimit_reset <= time.time() + 300
    with pytest.raises(MastodonRatelimitError):
        client.account_verify_credentials()


def test_its_pace_mode_finds_a_usable_reset_time(live_server, token):
    client = Mastodon(
        access_token=token,
        api_base_url=live_server.url,
        ratelimit_method="pace",
        ratelimit_pacefactor=1000,  # a pace that barely sleeps: the reset is what is tested
    )
    client.account_verify_credentials()
    client.account_verify_credentials()  # would raise without a reset time in the future
    assert client.ratelimit_remaining == 1
