"""Pictures people upload (checked, squared, stripped, in the post images' storage) and
the time zone pages show times in."""

import io

import pytest
from django.core.files.storage import storages
from django.test import Client
from django.utils import timezone
from PIL import Image

from accounts.models import User
from posts import post_html
from posts.services import create_post
from tests import images


def _save_profile(client: Client, **extra: object):
    data = {"display_name": "Alice", "bio": "", "time_zone": "", **extra}
    return client.post("/accounts/profile/", data)


def test_an_uploaded_picture_is_squared_stripped_stored_and_shown(alice_client, alice, media_root):
    picture = images.upload("me.jpg", images.jpeg_with_gps(size=(300, 200)))

    response = _save_profile(alice_client, avatar=picture)

    assert response.status_code == 302
    alice.refresh_from_db()
    assert alice.avatar.startswith(f"avatars/{alice.pk}/")
    with storages["default"].open(alice.avatar) as stored:
        image = Image.open(io.BytesIO(stored.read()))
    assert image.format == "WEBP"
    assert image.size == (256, 256)
    assert not image.getexif()
    url = f"/accounts/{alice.avatar}"
    served = Client().get(url)
    assert served.status_code == 200
    assert served["Content-Type"] == "image/webp"
    post = create_post(author=alice, text="with my picture")
    assert f'src="{url}"' in alice_client.get("/@alice/").content.decode()
    assert f'src="{url}"' in Client().get(f"/posts/{post.pk}/").content.decode()


def test_a_new_picture_replaces_the_old_file_and_removing_it_goes_back_to_the_generated(
    alice_client, alice, media_root
):
    _save_profile(alice_client, avatar=images.upload("a.png", images.image_bytes("PNG")))
    alice.refresh_from_db()
    first = alice.avatar
    _save_profile(alice_client, avatar=images.upload("b.png", images.image_bytes("PNG")))
    alice.refresh_from_db()
    assert alice.avatar != first
    assert not storages["default"].exists(first)
    assert Client().get(f"/accounts/{first}").status_code == 404

    _save_profile(alice_client, remove_avatar="on")

    alice.refresh_from_db()
    assert alice.avatar == ""
    assert 'src="/accounts/avatar/alice.svg"' in alice_client.get("/@alice/").content.decode()


def test_a_file_that_is_no_image_is_a_form_error_and_stores_nothing(
    alice_client, alice, media_root
):
    fake = images.upload("me.jpg", b"GIF89a not really an image")

    response = _save_profile(alice_client, avatar=fake)

    assert response.status_code == 400
    assert "not a JPEG, PNG, WebP or GIF" in response.content.decode()
    alice.refresh_from_db()
    assert alice.avatar == ""
    assert not (media_root / "avatars").exists()


def test_pages_show_times_in_the_readers_time_zone(alice_client, alice, settings):
    settings.TIME_ZONE = "UTC"
    post = create_post(author=alice, text="timed")
    with timezone.override("UTC"):
        in_utc = post_html.display_time(post.created_at)
    with timezone.override("Asia/Shanghai"):
        in_shanghai = post_html.display_time(post.created_at)
    assert in_utc != in_shanghai

    assert f'title="{in_utc}"' in alice_client.get(f"/posts/{post.pk}/").content.decode()
    _save_profile(alice_client, time_zone="Asia/Shanghai")
    assert User.objects.get(pk=alice.pk).time_zone == "Asia/Shanghai"
    assert f'title="{in_shanghai}"' in alice_client.get(f"/posts/{post.pk}/").content.decode()


def test_an_unknown_time_zone_is_a_form_error(alice_client, alice):
    assert _save_profile(alice_client, time_zone="Mars/Olympus").status_code == 400
    assert User.objects.get(pk=alice.pk).time_zone == ""


@pytest.mark.parametrize(("sent", "kept"), [("Europe/Paris", "Europe/Paris"), ("Nowhere/X", "")])
def test_sign_up_keeps_the_browsers_time_zone_when_it_is_a_real_one(client, db, sent, kept):
    password = "correct-horse-battery-staple-42"
    response = client.post(
        "/accounts/signup/",
        {
            "username": "newcomer",
            "email": "newcomer@example.com",
            "password1": password,
            "password2": password,
            "time_zone": sent,
        },
    )

    assert response.status_code == 302
    assert User.objects.get(username="newcomer").time_zone == kept
