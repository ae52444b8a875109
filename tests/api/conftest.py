"""Apps and tokens made the way the API makes them, a client that sends a token, Mastodon.py
signed in against a live server, and a real worker behind it."""

import pytest
from django.apps import apps
from oauth2_provider.models import get_access_token_model, get_application_model
from oauthlib.common import generate_token

from accounts.services import refresh_last_active
from feed_project.pagination import Cursor
from posts import ids
from posts.services import create_post
from relations.services import follow
from tests.conftest import PASSWORD
from tests.factories import UserFactory
from tests.workers import RealQueue, real_queue, start_site_worker  # noqa: F401 (a fixture)
from timelines.home import home_feed
from timelines.tasks import trim_inboxes

CAP = 3  # the live clients' inbox keeps three entries: older pages come by pull
POSTS = 201  # with the post each client makes, a hundred and one pages of two
PAGE_SIZE = 2


@pytest.fixture
def oauth_app(db):
    """A registered app, as POST /api/v1/apps makes one (read write follow push)."""
    model = get_application_model()
    app = model(
        name="Test client",
        redirect_uris="urn:ietf:wg:oauth:2.0:oob https://client.example/callback",
        client_type=model.CLIENT_CONFIDENTIAL,
        authorization_grant_type=model.GRANT_AUTHORIZATION_CODE,
        scopes="read write follow push",
    )
    app.plain_secret = app.client_secret  # hashed on save
    app.save()
    return app


@pytest.fixture
def make_token(oauth_app):
    """``make_token(user, "read write")``: the bearer value of a new access token."""
    from datetime import timedelta

    from django.utils import timezone

    def make(user, scope="read write follow", *, expires_in=3600):
        value = generate_token()
        get_access_token_model().objects.create(
            user=user,
            application=oauth_app,
            token=value,
            scope=scope,
            expires=timezone.now() + timedelta(seconds=expires_in),
        )
        return value

    return make


@pytest.fixture
def api(client, make_token):
    """A Django test client with helpers for bearer calls: ``api.get(path, token=...)``."""

    class Api:
        def _headers(self, token):
            return {"Authorization": f"Bearer {token}"} if token else {}

        def get(self, path, token=None, **params):
            return client.get(path, params, headers=self._headers(token))

        def post(self, path, data=None, token=None, json=True):
            if json:
                return client.post(
                    path, data or {}, content_type="application/json", headers=self._headers(token)
                )
            return client.post(path, data or {}, headers=self._headers(token))

        def delete(self, path, token=None):
            return client.delete(path, headers=self._headers(token))

    return Api()


@pytest.fixture
def sign_in(live_server):
    """``sign_in("alice")``: Mastodon.py signed in as alice against the live server by the
    password grant, through one app registered for the test (read write follow)."""
    from mastodon import Mastodon

    scopes = ["read", "write", "follow"]
    base = live_server.url
    client_id, secret = Mastodon.create_app(
        "pytest", scopes=scopes, redirect_uris="urn:ietf:wg:oauth:2.0:oob", api_base_url=base
    )

    def signed_in(username: str) -> Mastodon:
        client = Mastodon(client_id=client_id, client_secret=secret, api_base_url=base)
        client.log_in(username, PASSWORD, scopes=scopes, allow_http=True)
        return client

    return signed_in


@pytest.fixture
def live_queue(settings, real_queue) -> RealQueue:  # noqa: F811
    """The broker and a real worker for a live server, the inbox cut to ``CAP``."""
    settings.FEED_INBOX_CAP = CAP
    start_site_worker(real_queue)
    return real_queue


@pytest.fixture
def capped_feed(live_queue):
    """Alice, who follows Bob, who wrote more posts than an inbox keeps, every one
    delivered by the worker."""
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    follow(follower=alice, followee=bob)
    refresh_last_active(user=alice)  # seen lately: the trim keeps her inbox, cut to the cap
    for n in range(POSTS):
        create_post(author=bob, text=f"bob's post {n}")
    live_queue.wait_for_drain()
    home_feed(reader=alice, cursor=Cursor())  # her inbox is built, then trimmed to the cap
    trim_inboxes()
    inbox = apps.get_model("timelines", "InboxEntry")  # the feed's own table, only counted
    assert inbox.objects.filter(reader_id=alice.pk).count() == CAP
    return alice, bob


def site_pages(reader, limit):
    """The site's home feed, page after page, as status ids."""
    pages, cursor = [], Cursor()
    while True:
        page = home_feed(reader=reader, cursor=cursor, limit=limit)
        pages.append([ids.decimal_of_key(item.key) for item in page.items])
        if page.older is None:
            return pages
        cursor = Cursor(before=page.older)
