"""Posting with an Idempotency-Key and a quote, and editing (``PUT /api/v1/statuses/:id``):
the site's compose box, quote box and edit page behind Mastodon's parameters."""

import threading

import pytest
from django.db import connection

from api import statuses as statuses_endpoint
from posts import edits, ids
from posts.models import Post, PostEdit, Visibility
from posts.services import create_post
from relations.services import block, follow
from tests import images

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


def status_id(post: Post) -> str:
    return ids.decimal_of_key(post.timeline_key)


def post_of(status: dict) -> Post:
    return Post.objects.get(timeline_key=ids.key_of_decimal(status["id"]))


def put(client, path, body, token):
    return client.put(
        path, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
    )


def post_with_key(client, token, key, text="once"):
    return client.post(
        "/api/v1/statuses",
        {"status": text},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
    )


# --- Idempotency-Key -----------------------------------------------------------------


def test_the_same_key_twice_answers_the_first_status_and_posts_once(client, alice, token):
    first = post_with_key(client, token, "key-1")
    again = post_with_key(client, token, "key-1", text="a retry, maybe edited")
    assert first.status_code == again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["content"] == "<p>once</p>"
    assert Post.objects.count() == 1
    other = post_with_key(client, token, "key-2")
    assert other.json()["id"] != first.json()["id"]
    assert Post.objects.count() == 2


def test_the_same_key_from_two_people_is_two_posts(client, alice, bob, token, make_token):
    mine = post_with_key(client, token, "shared-key")
    theirs = post_with_key(client, make_token(bob), "shared-key")
    assert mine.json()["id"] != theirs.json()["id"]
    assert mine.json()["account"]["id"] == str(alice.pk)
    assert theirs.json()["account"]["id"] == str(bob.pk)
    assert Post.objects.count() == 2


def test_a_refused_post_keeps_no_key(client, alice, token):
    refused = post_with_key(client, token, "key", text="")
    assert refused.status_code == 422
    assert post_with_key(client, token, "key", text="now with words").status_code == 200
    assert Post.objects.get().text == "now with words"


@pytest.mark.django_db(transaction=True)
def test_two_requests_at_once_with_one_key_post_once(
    client, alice, make_token, monkeypatch, django_db_blocker
):
    """The second waits on the first's lock, then answers its status."""
    token = make_token(alice)
    slow = statuses_endpoint.services.create_post
    started = threading.Event()

    def create_post_slowly(**kwargs):
        started.set()
        threading.Event().wait(0.5)  # long enough for the other request to arrive
        return slow(**kwargs)

    monkeypatch.setattr(statuses_endpoint.services, "create_post", create_post_slowly)
    answers = []

    def send():
        try:
            answers.append(post_with_key(client.__class__(), token, "at-once"))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert started.is_set()
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert len({answer.json()["id"] for answer in answers}) == 1
    assert Post.objects.count() == 1


# --- quotes ------------------------------------------------------------------------


def test_quoting_a_public_post_as_the_quote_box_does(api, alice, bob, token):
    theirs = create_post(author=bob, text="quote me")
    answer = api.post(
        "/api/v1/statuses",
        {"status": "well said", "quoted_status_id": status_id(theirs)},
        token=token,
    )
    assert answer.status_code == 200, answer.content
    assert post_of(answer.json()).quote_of_id == theirs.pk


def test_a_post_that_may_not_be_quoted_is_the_services_refusal(api, alice, bob, carol, token):
    follow(follower=alice, followee=bob)
    followers_only = create_post(author=bob, text="friends", visibility=Visibility.FOLLOWERS)
    direct = create_post(author=carol, text="@bob hi", visibility=Visibility.DIRECT)
    blocker = create_post(author=carol, text="public, but not for alice")
    block(user=carol, target=alice)
    cases = [
        (status_id(followers_only), 403),  # she sees it, but it is never shown embedded
        (status_id(direct), 404),  # not for her: as if it were not there
        (status_id(blocker), 404),
        ("12345", 404),
        ("not-a-status", 404),
    ]
    for quoted, status in cases:
        answer = api.post(
            "/api/v1/statuses", {"status": "look", "quoted_status_id": quoted}, token=token
        )
        assert answer.status_code == status, (quoted, answer.content)
        assert "error" in answer.json()
    assert not Post.objects.filter(author=alice).exists()


def test_sensitive_and_language_are_accepted(api, token):
    body = {"status": "hello", "sensitive": True, "language": "en", "spoiler_text": "cw"}
    answer = api.post("/api/v1/statuses", body, token=token)
    assert answer.status_code == 200
    assert answer.json()["spoiler_text"] == "cw"
    assert answer.json()["sensitive"] is True


# --- edits ---------------------------------------------------------------------------


def test_an_edit_changes_text_and_warning_keeps_history_and_visibility(api, client, alice, token):
    post = create_post(author=alice, text="first words", visibility=Visibility.UNLISTED)
    path = f"/api/v1/statuses/{status_id(post)}"
    answer = put(
        client,
        path,
        {"status": "second words", "spoiler_text": "a warning", "visibility": "direct"},
        token,
    )
    assert answer.status_code == 200, answer.content
    shown = answer.json()
    assert shown["id"] == status_id(post)
    assert shown["content"] == "<p>second words</p>"
    assert shown["spoiler_text"] == "a warning"
    assert shown["visibility"] == "unlisted"  # an edit never changes who may see it
    assert shown["edited_at"] is not None
    versions = edits.history(Post.objects.get(pk=post.pk))
    assert [(v.text, v.spoiler_text) for v in versions] == [
        ("second words", "a warning"),
        ("first words", ""),
    ]
    # Mastodon.py sends a form when it has no media attributes.
    answer = client.put(
        path,
        "status=third+words",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.json()["content"] == "<p>third words</p>"
    assert answer.json()["spoiler_text"] == ""  # absent is none, as on Mastodon
    assert PostEdit.objects.filter(post_id=post.pk).count() == 2


def test_an_edit_changes_image_descriptions_but_not_the_images(api, client, alice, token):
    def upload(description):
        file = images.upload("a.png", images.image_bytes("PNG"), "image/png")
        body = {"file": file, "description": description}
        return api.post("/api/v2/media", body, token=token, json=False).json()["id"]

    first, second = upload("one"), upload("two")
    body = {"status": "pics", "media_ids": [first, second]}
    status = api.post("/api/v1/statuses", body, token=token)
    path = f"/api/v1/statuses/{status.json()['id']}"
    body = {
        "status": "pics",
        "media_ids": [first, second],
        "media_attributes": [{"id": second, "description": "two, described better"}],
    }
    answer = put(client, path, body, token)
    assert answer.status_code == 200, answer.content
    descriptions = [m["description"] for m in answer.json()["media_attachments"]]
    assert descriptions == ["one", "two, described better"]
    assert answer.json()["edited_at"] is not None

    # A posted image's description through PUT /api/v1/media/:id is an edit as well.
    answer = put(client, f"/api/v1/media/{first}", {"description": "one, again"}, token)
    assert answer.status_code == 200
    assert answer.json()["description"] == "one, again"
    shown = api.get(path, token=token).json()
    assert shown["media_attachments"][0]["description"] == "one, again"

    third = upload("three")
    for changed in ([first], [first, second, third]):
        answer = put(client, path, {"status": "pics", "media_ids": changed}, token)
        assert answer.status_code == 422
        assert answer.json()["error"].startswith("Validation failed: An edit keeps")
    stranger = put(client, path, {"media_attributes": [{"id": third, "description": "x"}]}, token)
    assert stranger.status_code == 422


def test_only_the_author_edits_and_bad_input_is_json(api, client, alice, bob, carol, make_token):
    post = create_post(author=alice, text="mine")
    path = f"/api/v1/statuses/{status_id(post)}"
    assert put(client, path, {"status": "bob's now"}, make_token(bob)).status_code == 403
    hidden = create_post(author=alice, text="@bob only", visibility=Visibility.DIRECT)
    hidden_path = f"/api/v1/statuses/{status_id(hidden)}"
    assert put(client, hidden_path, {"status": "x"}, make_token(carol)).status_code == 404
    assert put(client, path, {"status": "x"}, None).status_code == 401
    reader = make_token(alice, "read")
    assert put(client, path, {"status": "x"}, reader).status_code == 403
    token = make_token(alice)
    assert put(client, "/api/v1/statuses/nonsense", {"status": "x"}, token).status_code == 404
    empty = put(client, path, {"status": ""}, token)
    assert empty.status_code == 422
    assert "status" in empty.json()["details"]
    wrong = put(client, path, {"media_attributes": "not a list"}, token)
    assert wrong.status_code == 422
    assert Post.objects.get(pk=post.pk).text == "mine"
