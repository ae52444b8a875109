"""Uploading images before the status (``/api/v2/media``, ``/api/v1/media/:id``) and
posting them by id: the site's image pipeline and limits, alt text, whose they are."""

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.utils import timezone

from posts import ids
from posts.models import Post, PostMedia
from posts.tasks import sweep_discarded_media
from tests import images
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


def png(name: str = "cat.png", size=(120, 80)):
    return images.upload(name, images.image_bytes("PNG", size), "image/png")


def uploaded(api, token, description: str = "", path: str = "/api/v2/media") -> dict:
    body = {"file": png(), **({"description": description} if description else {})}
    answer = api.post(path, body, token=token, json=False)
    assert answer.status_code == 200, answer.content
    return answer.json()


def stored_files(media_root) -> list[str]:
    return sorted(str(p.relative_to(media_root)) for p in media_root.rglob("*") if p.is_file())


def put(client, path, body, token):
    return client.put(
        path, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
    )


def test_an_upload_is_a_media_attachment_with_its_alt_text_and_files(
    api, client, alice, token, media_root
):
    for path in ("/api/v2/media", "/api/v1/media", "/api/v2/media/"):
        shown = uploaded(api, token, "A cat on a mat", path=path)
        assert shown["type"] == "image"
        assert shown["description"] == "A cat on a mat"
        assert shown["meta"]["original"] == {
            "width": 120,
            "height": 80,
            "size": "120x80",
            "aspect": 1.5,
        }
    item = PostMedia.objects.get(pk=shown["id"])
    assert (item.author_id, item.post_id, item.position) == (alice.pk, None, None)
    assert len(stored_files(media_root)) == 3 * 2  # each: the original and a thumbnail

    # The app that uploaded it shows it before posting: the URLs answer the files.
    original = client.get(urlsplit(shown["url"]).path)
    assert original.status_code == 200
    assert original["Content-Type"] == "image/png"
    assert client.get(urlsplit(shown["preview_url"]).path)["Content-Type"] == "image/webp"
    # A guessed token is no upload.
    guessed = urlsplit(shown["url"]).path.replace(item.file.split("/")[-1].split(".")[0], "x" * 22)
    assert client.get(guessed).status_code == 404

    assert api.get(f"/api/v1/media/{shown['id']}", token=token).json() == shown


def test_a_file_that_is_not_an_image_is_a_422_with_the_sites_message(api, token, media_root):
    notes = images.upload("notes.png", b"these are my notes, not a picture\n" * 20, "image/png")
    answer = api.post("/api/v2/media", {"file": notes}, token=token, json=False)
    assert answer.status_code == 422
    assert answer.json()["error"].startswith("Validation failed: The file is not a JPEG, PNG")
    assert "file" in answer.json()["details"]
    huge = images.upload("huge.png", images.png_header_only(8000, 6000), "image/png")
    answer = api.post("/api/v2/media", {"file": huge}, token=token, json=False)
    assert answer.status_code == 422
    assert "megapixels" in answer.json()["error"]
    missing = api.post("/api/v2/media", {"description": "no file"}, token=token, json=False)
    assert missing.status_code == 422
    assert stored_files(media_root) == []
    assert not PostMedia.objects.exists()


def test_a_description_past_the_sites_length_is_a_422(api, token):
    answer = api.post(
        "/api/v2/media", {"file": png(), "description": "x" * 1501}, token=token, json=False
    )
    assert answer.status_code == 422
    assert "at most 1,500" in answer.json()["error"]


def test_uploading_needs_a_token_with_write_media(api, alice, make_token):
    assert api.post("/api/v2/media", {"file": png()}, json=False).status_code == 401
    reader = make_token(alice, "read")
    assert api.post("/api/v2/media", {"file": png()}, token=reader, json=False).status_code == 403
    writer = make_token(alice, "write:media")
    assert api.post("/api/v2/media", {"file": png()}, token=writer, json=False).status_code == 200


def test_only_the_uploader_reads_or_describes_an_upload(api, client, alice, bob, token, make_token):
    shown = uploaded(api, token)
    path = f"/api/v1/media/{shown['id']}"
    answer = put(client, path, {"description": "Now described"}, token)
    assert answer.status_code == 200
    assert answer.json()["description"] == "Now described"
    # Mastodon.py sends a form: a PUT's form is read as a POST's.
    answer = client.put(
        path,
        "description=In+a+form",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.json()["description"] == "In a form"
    answer = client.put(  # and a multipart one, as apps that send a thumbnail do
        path,
        encode_multipart(BOUNDARY, {"description": "In parts", "focus": "0.1,0.2"}),
        content_type=MULTIPART_CONTENT,
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.json()["description"] == "In parts"
    answer = client.put(
        path,
        "description=In+a+form",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert PostMedia.objects.get(pk=shown["id"]).alt_text == "In a form"

    stranger = make_token(bob)
    assert api.get(path, token=stranger).status_code == 404
    assert put(client, path, {"description": "mine now"}, stranger).status_code == 404
    for nonsense in ("0", "x", "9" * 40, "-1"):
        assert api.get(f"/api/v1/media/{nonsense}", token=token).status_code == 404
    assert PostMedia.objects.get(pk=shown["id"]).alt_text == "In a form"


def test_a_status_with_media_ids_carries_the_uploads_in_order(api, client, alice, bob, token):
    first, second = uploaded(api, token, "first"), uploaded(api, token, "second")
    answer = api.post(
        "/api/v1/statuses", {"status": "", "media_ids": [second["id"], first["id"]]}, token=token
    )
    assert answer.status_code == 200, answer.content
    status = answer.json()
    assert [m["id"] for m in status["media_attachments"]] == [second["id"], first["id"]]
    assert [m["description"] for m in status["media_attachments"]] == ["second", "first"]
    post = Post.objects.get(timeline_key=ids.key_of_decimal(status["id"]))
    assert list(
        PostMedia.objects.filter(post_id=post.pk).order_by("position").values_list("pk", flat=True)
    ) == [int(second["id"]), int(first["id"])]
    # Attached, the image is the post's: the upload's URL answers no more, the post's does.
    assert client.get(urlsplit(first["url"]).path).status_code == 404
    assert client.get(urlsplit(status["media_attachments"][1]["url"]).path).status_code == 200
    shown = api.get(f"/api/v1/media/{first['id']}", token=token).json()
    assert shown["url"] == status["media_attachments"][1]["url"]


def test_an_upload_is_posted_once(api, token):
    shown = uploaded(api, token)
    body = {"media_ids": [shown["id"]]}
    assert api.post("/api/v1/statuses", body, token=token).status_code == 200
    again = api.post("/api/v1/statuses", {**body, "status": "again"}, token=token)
    assert again.status_code == 422
    assert again.json()["error"] == (
        f"Validation failed: Media {shown['id']} not found or already attached to another post"
    )
    assert Post.objects.count() == 1


def test_someone_elses_or_an_unknown_media_id_is_a_422_and_posts_nothing(
    api, alice, bob, token, make_token
):
    bobs = uploaded(api, make_token(bob))
    for media_ids in ([bobs["id"]], ["12345"], ["not-an-id"], ["9" * 40]):
        answer = api.post("/api/v1/statuses", {"status": "hi", "media_ids": media_ids}, token=token)
        assert answer.status_code == 422, media_ids
        assert answer.json()["error"].startswith("Validation failed: Media ")
        assert answer.json()["details"]["media_ids"]
    assert not Post.objects.exists()
    assert PostMedia.objects.get(pk=bobs["id"]).post_id is None


def test_more_images_than_the_site_takes_is_a_422(api, token):
    five = [uploaded(api, token)["id"] for _ in range(5)]
    answer = api.post("/api/v1/statuses", {"status": "hi", "media_ids": five}, token=token)
    assert answer.status_code == 422
    assert "at most 4 images" in answer.json()["error"]
    assert not Post.objects.exists()
    # Form-encoded, as Mastodon.py sends them.
    form = {"status": "four", "media_ids[]": five[:4]}
    answer = api.post("/api/v1/statuses", form, token=token, json=False)
    assert answer.status_code == 200, answer.content
    assert len(answer.json()["media_attachments"]) == 4


def test_a_followers_only_posts_images_stay_with_the_post(api, client, alice, bob, carol, token):
    shown = uploaded(api, token, "private cat")
    status = api.post(
        "/api/v1/statuses",
        {"status": "for followers", "visibility": "private", "media_ids": [shown["id"]]},
        token=token,
    ).json()
    image = urlsplit(status["media_attachments"][0]["url"]).path
    client.force_login(carol)
    assert client.get(image).status_code == 404
    client.force_login(bob)  # Bob follows Alice
    assert client.get(image).status_code == 200


def test_the_sweep_deletes_uploads_no_post_named_within_a_day(api, alice, token, media_root):
    kept, stale = uploaded(api, token), uploaded(api, token)
    posted = uploaded(api, token)
    api.post("/api/v1/statuses", {"media_ids": [posted["id"]]}, token=token)
    a_day_ago = timezone.now() - timedelta(hours=25)
    PostMedia.objects.filter(pk__in=[stale["id"], posted["id"]]).update(created_at=a_day_ago)

    sweep_discarded_media()  # tasks run eagerly here: the files go at once
    assert set(PostMedia.objects.values_list("pk", flat=True)) == {
        int(kept["id"]),
        int(posted["id"]),
    }
    assert len(stored_files(media_root)) == 2 * 2
    answer = api.post("/api/v1/statuses", {"media_ids": [stale["id"]]}, token=token)
    assert answer.status_code == 422


def test_an_account_that_has_not_confirmed_its_email_cannot_upload(api, make_token, settings):
    settings.REQUIRE_EMAIL_VERIFICATION = True
    newcomer = UserFactory(username="newcomer", email_verified_at=None)
    answer = api.post("/api/v2/media", {"file": png()}, token=make_token(newcomer), json=False)
    assert answer.status_code == 403
    assert not PostMedia.objects.exists()
