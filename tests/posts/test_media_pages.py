"""Images and content warnings on the pages: who may fetch an image, what lists and the
detail page show, the compose box, the admin, the query counts, and erasure."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from posts import media
from posts.models import PostMedia
from posts.moderation import services as moderation
from posts.post_length import post_length
from posts.services import create_post, delete_post, repost
from relations.services import block
from tests import images
from tests.conftest import PASSWORD
from tests.factories import UserFactory
from timelines.home import _held_posts as held

# Nothing here depends on PostgreSQL: the embedded default takes images too.
pytestmark = pytest.mark.embedded

NEW_POST = "/posts/new/"


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def with_image(author, text: str = "", alt: str = "a red square", **kwargs):
    upload = images.upload("red.jpg", images.image_bytes("JPEG", (120, 90)))
    return create_post(author=author, text=text, media=media.prepare_all([upload], [alt]), **kwargs)


@pytest.fixture
def moderator(db):
    user = UserFactory(username="mod", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="moderate"))
    return user


# --- who may fetch an image ---------------------------------------------------------------


def test_an_image_is_served_with_its_type_to_anyone_who_may_see_the_post(client, alice):
    post = with_image(alice)

    original = client.get(f"/posts/{post.pk}/media/0/")
    thumbnail = client.get(f"/posts/{post.pk}/media/0/thumbnail/")

    assert original.status_code == 200 and original["Content-Type"] == "image/jpeg"
    assert b"".join(original.streaming_content)[:2] == b"\xff\xd8"
    assert thumbnail.status_code == 200 and thumbnail["Content-Type"] == "image/webp"
    assert "private" in original["Cache-Control"]


def test_a_hidden_posts_image_answers_404_to_everyone_but_moderators(
    client, alice, carol, moderator
):
    post = with_image(alice)
    moderation.hide_post(moderator=moderator, post=post)
    url = f"/posts/{post.pk}/media/0/thumbnail/"

    assert client.get(url).status_code == 404
    client.force_login(carol)
    assert client.get(url).status_code == 404
    client.force_login(alice)  # the author too: hidden is hidden
    assert client.get(url).status_code == 404
    client.force_login(moderator)
    assert client.get(url).status_code == 200
    detail = client.get(f"/posts/{post.pk}/").content.decode()
    assert f'<img src="/posts/{post.pk}/media/0/"' in detail


def test_a_deleted_posts_image_answers_404(client, alice):
    post = with_image(alice)
    delete_post(post=post)

    assert client.get(f"/posts/{post.pk}/media/0/").status_code == 404


def test_someone_blocked_either_way_gets_404_for_the_image(client, alice, carol):
    post = with_image(alice)
    block(user=alice, target=carol)
    client.force_login(carol)

    assert client.get(f"/posts/{post.pk}/media/0/").status_code == 404


@pytest.mark.parametrize("path", ["media/1/", "media/9/thumbnail/", "media/-1/", "media/x/"])
def test_an_image_that_does_not_exist_is_a_404(client, alice, path):
    post = with_image(alice)

    assert client.get(f"/posts/{post.pk}/{path}").status_code == 404
    assert client.get(f"/posts/NOTANID/{path}").status_code == 404


# --- content warnings ---------------------------------------------------------------------


def test_a_content_warning_hides_the_text_and_images_behind_details(alice_client, alice):
    response = alice_client.post(
        NEW_POST,
        {
            "text": "the ending, in full",
            "spoiler_text": "Film <spoilers>",
            "media": [images.upload("still.jpg", images.image_bytes())],
            "media_alt": ["the last scene"],
        },
    )
    assert response.status_code == 302

    page = alice_client.get("/").content.decode()
    start = page.index('<details class="post-warning">')
    details = page[start : page.index("</details>", start)]
    assert re.search(r"<summary>.*Film &lt;spoilers&gt;</summary>", details)
    assert "the ending, in full" in details
    assert 'alt="the last scene"' in details


def test_a_content_warning_over_200_characters_is_a_form_error(alice_client):
    response = alice_client.post(NEW_POST, {"text": "hi", "spoiler_text": "w" * 201})

    assert response.status_code == 400
    assert "A content warning is at most 200 characters (this one has 201)" in (
        response.content.decode()
    )


# --- the compose box ----------------------------------------------------------------------


def test_a_link_counts_as_23_characters_in_the_form_and_the_counter():
    link = "https://example.com/" + "a" * 300
    assert post_length(f"see {link} now") == len("see ") + 23 + len(" now")
    assert post_length("http://x.y") == 23
    assert post_length("no link: example.com") == len("no link: example.com")


def test_a_post_of_500_characters_with_a_long_link_is_taken_and_501_is_not(alice_client):
    link = "https://example.com/" + "a" * 300
    text = "x" * (500 - 23 - 1) + " " + link
    assert alice_client.post(NEW_POST, {"text": text}).status_code == 302

    response = alice_client.post(NEW_POST, {"text": "y" + text})
    assert response.status_code == 400
    assert "A post is at most 500 characters (this one has 501; a link counts as 23)" in (
        response.content.decode()
    )


def test_the_compose_box_works_without_javascript(alice_client):
    page = alice_client.get("/").content.decode()
    form = page[page.index('<form class="compose"') : page.index("</form>", page.index("compose"))]

    assert 'enctype="multipart/form-data"' in form
    assert re.search(r'<input type="file" name="media"[^>]* multiple', form)
    assert form.count('name="media_alt"') == 4
    assert 'name="spoiler_text"' in form
    assert 'data-max-length="500"' in form and 'data-url-length="23"' in form
    assert '<script src="/static/js/compose.js" defer></script>' in page


def test_a_refused_post_keeps_the_text_warning_and_descriptions(alice_client):
    response = alice_client.post(
        NEW_POST,
        {"text": "kept", "spoiler_text": "cw kept", "media_alt": ["alt kept"]},
    )

    page = response.content.decode()
    assert response.status_code == 400
    assert "kept</textarea>" in page and 'value="cw kept"' in page
    assert ">alt kept</textarea>" in page


# --- pages: images on every post, a fixed number of queries ---------------------------------


def _count_queries(client, url: str) -> tuple[int, list[str]]:
    held.clear()  # a process's first page: every post read (timelines.home._held_posts)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), post_ids(response)


def test_home_profile_detail_and_search_cost_the_same_queries_for_2_and_20_posts_with_images(
    client, alice, bob, django_capture_on_commit_callbacks
):
    client.force_login(bob)
    client.get("/")  # builds bob's inbox, records last-active
    # By someone bob does not follow, without the word: the replies' parent is on
    # none of the lists in either round (its author's name is one query a page,
    # posts.selectors.reply_names, whatever the page holds).
    parent = create_post(author=UserFactory(), text="the parent")
    counts: dict[int, list[int]] = {}
    for total in (2, 20):
        with django_capture_on_commit_callbacks(execute=True):
            while PostMedia.objects.filter(author=alice).count() < total:
                with_image(alice, "needle", in_reply_to=parent)
        pages = [
            "/",
            "/@alice/",
            f"/posts/{parent.pk}/",
            "/search/?q=needle",
        ]
        counts[total] = []
        for url in pages:
            n, shown = _count_queries(client, url)
            counts[total].append(n)
            assert len(shown) >= total
        page = client.get("/").content.decode()
        assert page.count('/thumbnail/" alt="a red square"') == total
    assert counts[2] == counts[20], counts


def test_a_repost_shows_the_originals_images(
    client, alice, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post = with_image(alice, "original")
        repost(user=bob, post=post)
    client.force_login(bob)

    page = client.get("/@bob/").content.decode()

    assert f'<img src="/posts/{post.pk}/media/0/thumbnail/" alt="a red square"' in page


# --- admin, erasure -------------------------------------------------------------------------


def test_moderators_see_a_posts_images_in_the_admin(client, alice, moderator):
    post = with_image(alice, "in the admin")
    moderator.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_post", "change_post", "view_postmedia"])
    )
    client.force_login(moderator)

    change = client.get(f"/admin/posts/post/{post.pk}/change/").content.decode()
    listing = client.get("/admin/posts/postmedia/").content.decode()

    thumb = f'src="/posts/{post.pk}/media/0/thumbnail/" alt="a red square"'
    assert thumb in change and thumb in listing


def test_erasing_an_account_deletes_its_images_rows_and_files(
    alice, settings, media_root, django_capture_on_commit_callbacks
):
    settings.ACCOUNT_DELETION_GRACE_DAYS = 0
    with_image(alice, "one")
    with_image(alice, "two")
    assert len(list(media_root.rglob("*.*"))) == 4
    client = Client()
    client.force_login(alice)

    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/settings/delete/", {"password": PASSWORD}).status_code == 302

    assert not PostMedia.objects.exists()
    assert [p for p in media_root.rglob("*") if p.is_file()] == []
