"""Composing with a real Mastodon client, Mastodon.py, against a live server: upload an
image with its description, post it with an idempotency key, change the description,
edit the status, and quote a post, each with the calls a real app makes."""

import pytest
import requests
from mastodon.errors import MastodonAPIError

from posts import edits, ids
from posts.models import Post, PostMedia
from tests import images
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def post_of(status) -> Post:
    return Post.objects.get(timeline_key=ids.key_of_decimal(str(status["id"])))


def test_a_mastodon_client_uploads_posts_describes_edits_and_quotes(live_server, sign_in):
    alice = UserFactory(username="alice")
    UserFactory(username="bob")
    client = sign_in("alice")

    png = images.image_bytes("PNG", (90, 60))
    uploaded = client.media_post(png, mime_type="image/png", description="A red square")
    assert uploaded["description"] == "A red square"
    assert uploaded["meta"]["original"]["width"] == 90
    assert requests.get(uploaded["url"]).headers["Content-Type"] == "image/png"

    described = client.media_update(uploaded, description="A red rectangle")
    assert described["description"] == "A red rectangle"

    posted = client.status_post("Look", media_ids=[uploaded], idempotency_key="look-1")
    retried = client.status_post("Look", media_ids=[uploaded], idempotency_key="look-1")
    assert retried["id"] == posted["id"]
    assert Post.objects.filter(author=alice).count() == 1
    assert [str(m["id"]) for m in posted["media_attachments"]] == [str(uploaded["id"])]
    assert posted["media_attachments"][0]["description"] == "A red rectangle"

    edited = client.status_update(
        posted,
        "Look at this",
        spoiler_text="colours",
        media_attributes=[{"id": str(uploaded["id"]), "description": "A red oblong"}],
    )
    assert edited["edited_at"] is not None
    assert edited["spoiler_text"] == "colours"
    assert edited["media_attachments"][0]["description"] == "A red oblong"
    assert client.status_update(posted, "Look at this, again")["content"] == (
        "<p>Look at this, again</p>"
    )
    versions = edits.history(post_of(posted))
    assert [version.text for version in versions] == ["Look at this, again", "Look at this", "Look"]

    # A posted image's description is still the uploader's to change.
    client.media_update(uploaded, description="An oblong, red")
    assert PostMedia.objects.get(pk=uploaded["id"]).alt_text == "An oblong, red"

    bob = sign_in("bob")
    with pytest.raises(MastodonAPIError):  # someone else's upload is no media of bob's
        bob.status_post("Mine now", media_ids=[uploaded["id"]])
    with pytest.raises(MastodonAPIError):
        bob.status_update(posted, "Edited by bob")

    quote = bob.status_post("Nice one", quoted_status_id=posted["id"])
    assert post_of(quote).quote_of_id == post_of(posted).pk
