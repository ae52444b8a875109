"""Images of posts: checked by content, re-encoded without
metadata, stored, shown with their alt text, and deleted with their post."""

import io

import pytest
from django.core.files.storage import storages
from PIL import Image

from posts import media
from posts.models import Post, PostMedia
from posts.services import create_post, delete_post
from tests import images
from tests.images import GPS

# Nothing here depends on PostgreSQL: the embedded default takes images too.
pytestmark = pytest.mark.embedded

NEW_POST = "/posts/new/"


def stored_files(media_root) -> list[str]:
    return sorted(str(p.relative_to(media_root)) for p in media_root.rglob("*") if p.is_file())


def read_stored(name: str) -> bytes:
    with storages["default"].open(name) as f:
        return f.read()


def two_images() -> list:
    return [
        images.upload("cat.jpg", images.image_bytes("JPEG", (800, 600))),
        images.upload("dog.png", images.image_bytes("PNG", (300, 400)), "image/png"),
    ]


def test_a_post_with_two_images_stores_both_and_shows_them_with_their_alt_text(
    alice_client, alice, media_root
):
    response = alice_client.post(
        NEW_POST,
        {"text": "my pets", "media": two_images(), "media_alt": ["A red cat", "A red dog"]},
    )

    assert response.status_code == 302
    post = Post.objects.get(author=alice)
    cat, dog = PostMedia.objects.filter(post=post).order_by("position")
    assert (cat.alt_text, cat.content_type, cat.width, cat.height) == (
        "A red cat",
        "image/jpeg",
        800,
        600,
    )
    assert (dog.content_type, dog.width, dog.height) == ("image/png", 300, 400)
    assert (cat.thumbnail_width, cat.thumbnail_height) == (640, 480)
    assert len(stored_files(media_root)) == 4  # an original and a thumbnail each
    page = alice_client.get("/").content.decode()
    article = page[page.index(f'data-post-id="{post.pk}"') :]
    assert (
        f'<img src="/posts/{post.pk}/media/0/thumbnail/" alt="A red cat" width="640" '
        'height="480" loading="lazy">'
    ) in article
    assert f'<img src="/posts/{post.pk}/media/1/thumbnail/" alt="A red dog"' in article
    detail = alice_client.get(f"/posts/{post.pk}/").content.decode()
    assert f'<img src="/posts/{post.pk}/media/0/" alt="A red cat" width="800" height="600">' in (
        detail
    )


def test_a_post_of_images_alone_needs_no_text(alice_client, alice):
    response = alice_client.post(NEW_POST, {"text": "", "media": two_images()[:1]})

    assert response.status_code == 302
    assert PostMedia.objects.get().alt_text == ""


def test_stored_images_carry_no_exif_gps_xmp_or_comment(alice, media_root):
    upload = images.upload("holiday.jpg", images.jpeg_with_gps())
    post = create_post(author=alice, text="", media=media.prepare_all([upload], ["beach"]))

    item = PostMedia.objects.get(post=post)
    for name in (item.file, item.thumbnail):
        data = read_stored(name)
        stored = Image.open(io.BytesIO(data))
        assert not stored.getexif().get_ifd(GPS)
        assert dict(stored.getexif()) == {}
        assert b"Exif" not in data and b"xmpmeta" not in data and b"shot at home" not in data
        assert not {"exif", "xmp", "comment", "icc_profile"} & set(stored.info)


def test_the_exif_orientation_is_applied_before_it_is_dropped(alice):
    upload = images.upload("sideways.jpg", images.jpeg_with_gps((60, 20), orientation=6))
    post = create_post(author=alice, text="", media=media.prepare_all([upload], []))

    item = PostMedia.objects.get(post=post)
    assert (item.width, item.height) == (20, 60)
    assert Image.open(io.BytesIO(read_stored(item.file))).size == (20, 60)


def test_animations_and_transparency_survive_the_re_encoding(alice):
    gif = images.upload("dance.gif", images.animated_gif(frames=3), "image/gif")
    png = images.upload("logo.png", images.image_bytes("PNG", color=(0, 0, 0)), "image/png")
    post = create_post(author=alice, text="", media=media.prepare_all([gif, png], []))

    animated, transparent = PostMedia.objects.filter(post=post).order_by("position")
    assert Image.open(io.BytesIO(read_stored(animated.file))).n_frames == 3
    assert Image.open(io.BytesIO(read_stored(transparent.file))).mode == "RGBA"
    assert read_stored(animated.thumbnail)[8:12] == b"WEBP"


TEXT = images.upload  # for readability below


@pytest.mark.parametrize(
    ("files", "alts", "error"),
    [
        pytest.param(
            [("notes.png", b"these are my notes, not a picture\n" * 20)],
            [],
            "is not a JPEG, PNG, WebP or GIF image",
            id="text-file-renamed-png",
        ),
        pytest.param(
            [("big.png", "noise-12mb")], [], "MB: an image is at most 10 MB", id="12-megabytes"
        ),
        pytest.param(
            [("bomb.png", images.png_header_only(100_000, 100_000))],
            [],
            "has too many pixels",
            id="decompression-bomb",
        ),
        pytest.param(
            [("huge.png", images.png_header_only(8000, 6000))],
            [],
            "8000 x 6000 pixels: an image is at most 40 megapixels",
            id="48-megapixels",
        ),
        pytest.param(
            [(f"{n}.jpg", images.image_bytes()) for n in range(5)],
            [],
            "A post has at most 4 images (you chose 5)",
            id="five-images",
        ),
        pytest.param([], ["a cat"], "Description 1 has no image", id="alt-text-without-image"),
        pytest.param(
            [("cat.jpg", images.image_bytes())],
            ["a cat", "", "a third"],
            "Description 3 has no image",
            id="alt-text-beyond-the-images",
        ),
        pytest.param(
            [("cat.jpg", images.image_bytes())],
            ["x" * 1501],
            "Description 1 is 1,501 characters: at most 1,500",
            id="alt-text-too-long",
        ),
        pytest.param(
            [("cut.jpg", images.image_bytes("JPEG", (400, 300))[:400])],
            [],
            "could not be read",
            id="truncated-jpeg",
        ),
        pytest.param(
            [("pic.bmp", images.image_bytes("BMP"))],
            [],
            "is not a JPEG, PNG, WebP or GIF image",
            id="bmp",
        ),
    ],
)
def test_a_refused_upload_is_a_form_error_and_stores_nothing(
    alice_client, alice, media_root, files, alts, error
):
    uploads = [
        images.upload(name, images.noise_png(12) if data == "noise-12mb" else data)
        for name, data in files
    ]

    response = alice_client.post(NEW_POST, {"text": "look", "media": uploads, "media_alt": alts})

    assert response.status_code == 400
    assert error in response.content.decode()
    assert not Post.objects.exists()
    assert not PostMedia.objects.exists()
    assert stored_files(media_root) == []


def test_a_post_whose_transaction_fails_leaves_no_file(alice, media_root, monkeypatch):
    prepared = media.prepare_all([images.upload("cat.jpg", images.image_bytes())], [])

    def refuse(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(media, "attach", refuse)
    with pytest.raises(RuntimeError):
        create_post(author=alice, text="", media=prepared)

    assert stored_files(media_root) == []
    assert not Post.objects.exists()


def test_deleting_a_post_deletes_its_files_on_commit(
    alice, media_root, django_capture_on_commit_callbacks
):
    post = create_post(
        author=alice,
        text="",
        media=media.prepare_all([images.upload("a.jpg", images.image_bytes())], []),
    )
    assert len(stored_files(media_root)) == 2

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        delete_post(post=post)
    assert len(stored_files(media_root)) == 2  # not before the commit
    assert PostMedia.objects.get().discarded_at is not None
    assert media.media_by_post([post]) == {}  # off every page at once

    for callback in callbacks:
        callback()
    assert stored_files(media_root) == []
    assert not PostMedia.objects.exists()


def test_the_sweep_deletes_discarded_media_whose_task_was_lost(alice, media_root):
    from datetime import timedelta

    from django.utils import timezone

    from posts.tasks import sweep_discarded_media

    post = create_post(
        author=alice,
        text="",
        media=media.prepare_all([images.upload("a.jpg", images.image_bytes())], []),
    )
    media.discard(post=post)  # as delete_post does, but no task queued
    sweep_discarded_media()
    assert PostMedia.objects.exists()  # too recent: its task may still be queued

    PostMedia.objects.update(discarded_at=timezone.now() - timedelta(hours=1))
    sweep_discarded_media()
    assert not PostMedia.objects.exists()
    assert stored_files(media_root) == []


def test_a_broker_that_refuses_the_deletion_leaves_it_to_the_sweep(
    alice, media_root, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    from posts import tasks

    def refuse(*args):
        raise OperationalError("the broker is down")

    post = create_post(
        author=alice,
        text="",
        media=media.prepare_all([images.upload("a.jpg", images.image_bytes())], []),
    )
    monkeypatch.setattr(tasks.delete_discarded_media, "delay", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        delete_post(post=post)  # the commit is not undone, nor the request failed
    assert len(stored_files(media_root)) == 2  # not run in process: the sweep's to do
    assert PostMedia.objects.get().discarded_at is not None


def test_a_request_with_more_files_than_django_reads_is_a_400_not_a_500(alice_client, media_root):
    uploads = [images.upload(f"{n}.jpg", b"x") for n in range(11)]

    response = alice_client.post(NEW_POST, {"text": "many", "media": uploads})

    assert response.status_code == 400
    assert not Post.objects.exists()
    assert stored_files(media_root) == []
