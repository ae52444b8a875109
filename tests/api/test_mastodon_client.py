"""A real Mastodon client, Mastodon.py, against a live server: it registers an app,
signs in by password and by the code flow with PKCE (the consent page driven as a
browser would: log in, allow, read the code), and posts, replies, deletes and pages
the home feed past the inbox's cap, a hundred pages and more, and back, each page
the site's own; then the rest of the acceptance list (media with alt text, quote,
edit, follows, blocks and mutes, favourites and reblogs, threads, notifications v1
and v2, markers, search).

The site runs as in production: the live server publishes its tasks to a broker
and a real Celery worker (``tests/workers.py``) delivers posts, backfills follows
and writes notifications; the client waits for what the worker does as a person
refreshing would, and the test waits for the queue to drain before it compares
the feeds."""

import base64
import hashlib
import re
import secrets
import time
from urllib.parse import urljoin

import pytest
import requests
from django.apps import apps
from mastodon import Mastodon
from mastodon.errors import MastodonNotFoundError, MastodonUnauthorizedError

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

pytestmark = pytest.mark.django_db(transaction=True)

OOB = "urn:ietf:wg:oauth:2.0:oob"
SCOPES = ["read", "write", "follow"]
CAP = 3  # the inbox keeps three entries: older pages come by pull
POSTS = 201  # with the post made in the test, a hundred and one pages of two
PAGE_SIZE = 2
REFRESH_SECONDS = 30


@pytest.fixture
def live_queue(settings, real_queue) -> RealQueue:  # noqa: F811
    """The broker and a real worker for a live server, the inbox cut to ``CAP``."""
    settings.FEED_INBOX_CAP = CAP
    start_site_worker(real_queue)
    return real_queue


def refreshed(read, done, what: str):
    """Reads until ``done(value)`` holds, as a person pulling to refresh does: the
    worker delivers a moment after the post."""
    deadline = time.monotonic() + REFRESH_SECONDS
    while not done(value := read()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


@pytest.fixture
def world(live_queue):
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
    return alice


def site_pages(reader, limit):
    """The site's home feed, page after page, as status ids."""
    pages, cursor = [], Cursor()
    while True:
        page = home_feed(reader=reader, cursor=cursor, limit=limit)
        pages.append([ids.decimal_of_key(item.key) for item in page.items])
        if page.older is None:
            return pages
        cursor = Cursor(before=page.older)


def code_by_consent(base: str, app: tuple[str, str], username: str, **params: str) -> str:
    """What a person does in the browser: open the authorize URL, log in, allow, and
    read the code the out-of-band page shows."""
    browser = requests.Session()
    query = {
        "client_id": app[0],
        "redirect_uri": OOB,
        "response_type": "code",
        "scope": " ".join(SCOPES),
        **params,
    }
    login = browser.get(f"{base}/oauth/authorize", params=query)
    assert "/accounts/login/" in login.url
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
    nxt = re.search(r'name="next" value="([^"]+)"', login.text).group(1)
    consent = browser.post(
        login.url,
        data={
            "csrfmiddlewaretoken": csrf,
            "username": username,
            "password": PASSWORD,
            "next": nxt.replace("&amp;", "&"),
        },
        headers={"Referer": login.url},
    )
    assert consent.ok and "authorization-form" in consent.text, consent.text[:500]
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', consent.text))
    fields = {name: value.replace("&amp;", "&") for name, value in fields.items()}
    shown = browser.post(
        urljoin(consent.url, "/oauth/authorize"),
        data={**fields, "allow": "Authorize"},
        headers={"Referer": consent.url},
    )
    assert shown.ok, shown.text[:500]
    return re.search(r'value="([^"]+)" id="authorization-code"', shown.text).group(1)


def test_a_mastodon_client_signs_in_posts_and_pages_the_home_feed(
    live_server,
    live_queue,
    world,
):
    alice = world
    base = live_server.url
    app = Mastodon.create_app("pytest", scopes=SCOPES, redirect_uris=OOB, api_base_url=base)

    by_password = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=base)
    by_password.log_in("alice", PASSWORD, scopes=SCOPES, allow_http=True)
    assert by_password.account_verify_credentials()["username"] == "alice"

    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    code = code_by_consent(
        base, app, "alice", code_challenge=challenge, code_challenge_method="S256"
    )
    exchanged = requests.post(
        f"{base}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": OOB,
            "client_id": app[0],
            "client_secret": app[1],
        },
    )
    assert exchanged.ok, exchanged.text
    assert exchanged.json()["scope"] == " ".join(SCOPES)
    client = Mastodon(access_token=exchanged.json()["access_token"], api_base_url=base)
    assert client.me()["id"] == str(alice.pk)

    # Mastodon.py's own code flow sends no PKCE challenge: that works too.
    plain = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=base)
    plain.log_in(code=code_by_consent(base, app, "alice"), scopes=SCOPES, allow_http=True)
    assert plain.me()["username"] == "alice"

    # Post, reply, read, delete.
    bobs = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=base)
    bobs.log_in("bob", PASSWORD, scopes=SCOPES, allow_http=True)
    posted = bobs.status_post("A post through the API")
    reply = client.status_reply(posted, "a reply through the API")
    assert str(reply["in_reply_to_id"]) == str(posted["id"])
    assert "@bob" in reply["content"]
    assert client.status(posted["id"])["replies_count"] == 1
    client.status_delete(reply["id"])
    with pytest.raises(MastodonNotFoundError):
        client.status(reply["id"])

    # The home feed, two at a time, past the inbox's cap to Bob's first post and back.
    refreshed(
        lambda: client.timeline_home(limit=PAGE_SIZE),
        lambda page: bool(page) and page[0]["id"] == posted["id"],
        "Bob's post at the top of Alice's home feed",
    )
    live_queue.wait_for_drain()
    expected = site_pages(alice, PAGE_SIZE)
    assert sum(len(page) for page in expected) == POSTS + 1 > CAP
    assert len(expected) > 100
    page = client.timeline_home(limit=PAGE_SIZE)
    pages = []
    while page:
        pages.append([str(status["id"]) for status in page])
        page = client.fetch_next(page)
    assert pages == expected
    back = client.timeline_home(limit=PAGE_SIZE, min_id=pages[-1][-1])
    going_up = []
    while back:
        going_up.append([str(status["id"]) for status in back])
        back = client.fetch_previous(back)
    flat = [status_id for page in pages for status_id in page]
    assert [status_id for page in reversed(going_up) for status_id in page] == flat[:-1]

    revoked = by_password.access_token
    by_password.revoke_access_token(allow_http=True)
    with pytest.raises(MastodonUnauthorizedError):
        Mastodon(access_token=revoked, api_base_url=base).account_verify_credentials()
    assert any("timelines.fan_out_post[" in worker.log() for worker in live_queue.workers)
