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
from mastodon import Mastodon
from mastodon.errors import MastodonNotFoundError, MastodonUnauthorizedError

from accounts.services import refresh_last_active
from feed_project.pagination import Cursor
from posts import ids
from posts.edits import history
from posts.media_models import PostMedia
from posts.models import Post
from posts.search import search
from posts.selectors import thread
from posts.services import create_post
from relations.selectors import relationships
from tests import images
from tests.api.conftest import CAP, PAGE_SIZE, POSTS, site_pages
from tests.conftest import PASSWORD
from tests.factories import UserFactory
from timelines.markers.selectors import markers_of
from timelines.notifications.selectors import notifications_page, unread

pytestmark = pytest.mark.django_db(transaction=True)

OOB = "urn:ietf:wg:oauth:2.0:oob"
SCOPES = ["read", "write", "follow"]
REFRESH_SECONDS = 30


def refreshed(read, done, what: str):
    """Reads until ``done(value)`` holds, as a person pulling to refresh does: the
    worker delivers a moment after the post."""
    deadline = time.monotonic() + REFRESH_SECONDS
    while not done(value := read()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def post_of(status_id: str) -> Post:
    return Post.objects.get(timeline_key=ids.key_of_decimal(str(status_id)))


def status_id_of(post: Post) -> str:
    return ids.decimal_of_key(post.timeline_key)


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
    capped_feed,
):
    alice, _ = capped_feed
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


def test_a_mastodon_client_does_the_rest_of_the_acceptance_list(
    live_server, live_queue, make_token
):
    """Media with alt text, quote, edit and history, follow (the worker's backfill),
    favourite, reblog and undo, a thread, notifications v1 and v2, markers, relations
    and search, each checked against the site's own state."""
    base = live_server.url
    people = {name: UserFactory(username=name) for name in ("alice", "bob", "carol", "dave")}
    for person in people.values():
        refresh_last_active(user=person)
    alice, bob = (
        Mastodon(access_token=make_token(people[name]), api_base_url=base)
        for name in ("alice", "bob")
    )
    carols = create_post(author=people["carol"], text="an aardvark walks by #aardvark")
    create_post(author=people["carol"], text="an aardvark for followers", visibility="private")

    # Alice posts a picture with its alt text; Bob follows her and the worker brings it.
    png = images.image_bytes("PNG", (40, 30))
    uploaded = alice.media_post(png, mime_type="image/png", description="A red square")
    picture = alice.status_post("A picture", media_ids=[uploaded])
    described = PostMedia.objects.filter(
        author_id=people["alice"].pk, post_id=post_of(picture["id"]).pk
    )
    assert [item.alt_text for item in described] == ["A red square"]
    assert bob.account_follow(people["alice"].pk)["following"] is True
    refreshed(
        lambda: [status["id"] for status in bob.timeline_home()],
        lambda home: picture["id"] in home,
        "Alice's picture in Bob's home feed",
    )

    # Bob quotes it; Alice edits it; the quote shows the edit, the history both.
    quote = bob.status_post("Look at this", quoted_status_id=picture["id"])
    assert post_of(quote["id"]).quote_of_id == post_of(picture["id"]).pk
    edited = alice.status_update(picture, "A red picture", media_ids=[uploaded])
    assert edited["edited_at"] is not None
    assert [version.text for version in history(post_of(picture["id"]))] == [
        "A red picture",
        "A picture",
    ]
    assert ["A picture" in v["content"] for v in alice.status_history(picture)] == [True, False]
    assert "A red picture" in bob.status(quote)["quote"]["quoted_status"]["content"]

    # Alice favourites and reblogs the quote, replies to it, undoes both.
    assert alice.status_favourite(quote)["favourites_count"] == 1
    assert alice.status_reblog(quote)["reblog"]["id"] == quote["id"]
    reply = alice.status_reply(quote, "I see it")
    context = bob.status_context(reply)
    shown = thread(post_of(reply["id"]), viewer_id=people["bob"].pk, cursor=Cursor())
    assert (
        [s["id"] for s in context["ancestors"]]
        == [quote["id"]]
        == [status_id_of(post) for post in shown.ancestors]
    )

    # Bob's notifications, as the worker writes them, v1 and grouped.
    notes = refreshed(
        lambda: bob.notifications(),
        lambda notes: {note.type for note in notes} >= {"favourite", "reblog", "mention"},
        "Bob's notifications",
    )
    site = notifications_page(user=people["bob"], cursor=Cursor(), limit=40)
    assert [str(note.id) for note in notes] == [str(note.pk) for note in site.items]
    grouped = bob.grouped_notifications()
    # Alice's reply names @bob, as apps write it: one notification for it, not two.
    assert sorted(note.type for note in notes) == ["favourite", "mention", "reblog"]
    assert sorted(group.type for group in grouped.notification_groups) == [
        "favourite",
        "mention",
        "reblog",
    ]
    assert bob.unread_grouped_notifications_count() == 3
    bob.markers_set(["notifications"], [notes[0].id])
    assert bob.markers_get(["notifications"])["notifications"]["last_read_id"] == str(notes[0].id)
    assert markers_of(user=people["bob"], timelines=["notifications"])[
        "notifications"
    ].last_read_id == str(notes[0].id)
    assert unread(user=people["bob"]) == []

    assert alice.status_unfavourite(quote)["favourites_count"] == 0
    assert alice.status_unreblog(quote)["reblogs_count"] == 0
    original = post_of(quote["id"])
    assert (original.like_count, original.repost_count, original.reply_count) == (0, 0, 1)

    # Relations: follow, unfollow, mute, block, as the site has them.
    alice.account_follow(people["bob"].pk)
    alice.account_unfollow(people["bob"].pk)
    alice.account_mute(people["carol"].pk)
    alice.account_block(people["dave"].pk)
    answered = alice.account_relationships([people[n].pk for n in ("bob", "carol", "dave")])
    site = relationships(people["alice"].pk, [people[n].pk for n in ("bob", "carol", "dave")])
    assert (
        [(r["following"], r["followed_by"], r["muting"], r["blocking"]) for r in answered]
        == [
            (site[p]["following"], site[p]["followed_by"], site[p]["muting"], site[p]["blocking"])
            for p in (people["bob"].pk, people["carol"].pk, people["dave"].pk)
        ]
        == [(False, True, False, False), (False, False, True, False), (False, False, False, True)]
    )

    # Search: Carol's public post, not her followers-only one.
    found = bob.search_v2("aardvark")
    site = search(query="aardvark", viewer=people["bob"], cursor=Cursor())
    assert (
        [s["id"] for s in found["statuses"]]
        == [status_id_of(carols)]
        == [status_id_of(post) for post in site.posts.items]
    )
    assert "aardvark" in [tag["name"] for tag in found["hashtags"]]

    live_queue.wait_for_drain()
    assert any("timelines.sync_author[" in worker.log() for worker in live_queue.workers)
