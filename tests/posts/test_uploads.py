"""Images uploaded ahead of their post (posts.uploads): taken by one post only, swept
when no post named them, their files served only while unattached."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from feed_project.images import Refused
from feed_project.refusals import NotFound
from posts import media, uploads
from posts.forms import PostForm
from posts.models import Post, PostMedia
from posts.services import create_post, delete_post
from posts.tasks import sweep_discarded_media
from tests import images


def an_upload(author, alt: str = "") -> PostMedia:
    file = images.upload("a.png", images.image_bytes("PNG"), "image/png")
    return uploads.upload(author_id=author.pk, image=media.prepare(file, alt_text=alt))


def stored_files(media_root) -> list[str]:
    return sorted(str(p.relative_to(media_root)) for p in media_root.rglob("*") if p.is_file())


@pytest.mark.django_db
def test_a_post_takes_its_uploads_after_its_own_images_and_off_no_one_else(alice, bob):
    upload = an_upload(alice, "mine")
    sent = media.prepare_all([images.upload("b.jpg", images.image_bytes())], ["sent"])
    post = create_post(author=alice, text="", media=sent, upload_ids=[upload.pk])
    shown = media.media_by_post([post])[post.pk]
    assert [(item.position, item.alt_text) for item in shown] == [(0, "sent"), (1, "mine")]

    with pytest.raises(Refused):  # taken
        uploads.attachable(author_id=alice.pk, media_ids=[upload.pk])
    bobs = an_upload(bob)
    with pytest.raises(Refused, match=f"Media {bobs.pk} not found"):
        uploads.attachable(author_id=alice.pk, media_ids=[str(bobs.pk)])
    with pytest.raises(Refused, match="at most 4 images"):
        uploads.attachable(author_id=bob.pk, media_ids=["1", "2", "3", "4", "5"])
    assert uploads.attachable(author_id=bob.pk, media_ids=[bobs.pk, str(bobs.pk)]) == [bobs.pk]


@pytest.mark.django_db
def test_a_post_that_lost_its_upload_to_another_is_not_written(alice, media_root):
    upload = an_upload(alice)
    create_post(author=alice, text="first", upload_ids=[upload.pk])
    with pytest.raises(Refused):
        create_post(author=alice, text="second", upload_ids=[upload.pk])
    assert list(Post.objects.values_list("text", flat=True)) == ["first"]
    assert len(stored_files(media_root)) == 2


@pytest.mark.django_db(transaction=True)
def test_two_posts_at_once_naming_one_upload_take_it_once(alice):
    upload = an_upload(alice)
    outcomes = []

    def post(text):
        try:
            create_post(author=alice, text=text, upload_ids=[upload.pk])
            outcomes.append("posted")
        except Refused:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(f"post {n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["posted", "refused", "refused", "refused"]
    assert Post.objects.count() == 1
    assert PostMedia.objects.get(pk=upload.pk).post_id == Post.objects.get().pk


@pytest.mark.django_db
def test_the_sweep_of_discarded_media_takes_uploads_no_post_named(alice, media_root):
    fresh, stale, posted = an_upload(alice), an_upload(alice), an_upload(alice)
    post = create_post(author=alice, text="kept", upload_ids=[posted.pk])
    long_ago = timezone.now() - timedelta(seconds=uploads.UNATTACHED_FOR_SECONDS + 60)
    PostMedia.objects.filter(pk__in=[stale.pk, posted.pk]).update(created_at=long_ago)

    sweep_discarded_media()
    assert set(PostMedia.objects.values_list("pk", flat=True)) == {fresh.pk, posted.pk}
    assert len(stored_files(media_root)) == 4

    delete_post(post=post)  # and a deleted post's image goes as before
    sweep_discarded_media()
    PostMedia.objects.filter(discarded_at__isnull=False).update(discarded_at=long_ago)
    sweep_discarded_media()
    assert list(PostMedia.objects.values_list("pk", flat=True)) == [fresh.pk]


@pytest.mark.django_db
def test_an_uploads_files_are_served_by_its_token_until_a_post_takes_it(client, alice, bob):
    upload = an_upload(alice)
    path = uploads.upload_path(upload)
    assert client.get(path).status_code == 200
    assert client.get(uploads.upload_path(upload, thumbnail=True))["Content-Type"] == "image/webp"
    wrong = path.replace(uploads.token_of(upload), "A" * len(uploads.token_of(upload)))
    assert client.get(wrong).status_code == 404
    huge = path.replace(f"/{upload.pk}/", f"/{'9' * 30}/")
    assert client.get(huge).status_code == 404
    with pytest.raises(NotFound):
        uploads.own_media(author_id=bob.pk, media_id=upload.pk)
    create_post(author=alice, text="taken", upload_ids=[upload.pk])
    assert client.get(path).status_code == 404


@pytest.mark.django_db
def test_the_compose_form_takes_a_post_of_uploads_alone():
    assert not PostForm({"text": ""}).is_valid()
    assert PostForm({"text": ""}, uploads=1).is_valid()


@pytest.mark.django_db
def test_an_edit_keeps_the_images_and_may_describe_them(alice, bob):
    upload = an_upload(alice, "before")
    post = create_post(author=alice, text="pic", upload_ids=[upload.pk])
    shown = media.media_by_post([post])[post.pk]
    assert uploads.alt_texts_of_edit(shown, None, {str(upload.pk): "after"}) == ["after"]
    assert uploads.alt_texts_of_edit(shown, [upload.pk], {}) == ["before"]
    with pytest.raises(Refused, match="keeps a post's images"):
        uploads.alt_texts_of_edit(shown, [], {})
    other = an_upload(alice)
    with pytest.raises(Refused, match=f"Media {other.pk} not found"):
        uploads.alt_texts_of_edit(shown, None, {str(other.pk): "x"})

    uploads.describe(user_id=alice.pk, item=PostMedia.objects.get(pk=upload.pk), description="new")
    assert PostMedia.objects.get(pk=upload.pk).alt_text == "new"
    assert post.__class__.objects.get(pk=post.pk).edited_at is not None


@pytest.mark.django_db
def test_an_archive_holds_the_posts_images_and_no_upload_left_unposted(alice):
    from posts.archive_part import SECTIONS

    posted, waiting = an_upload(alice), an_upload(alice)
    post = create_post(author=alice, text="kept", upload_ids=[posted.pk])
    posts_section = SECTIONS[0]
    assert posts_section.file_count(alice.pk) == 1
    assert [path for path, _ in posts_section.files(alice.pk)] == [f"media/{post.pk}-1.png"]
    assert PostMedia.objects.filter(pk=waiting.pk, post__isnull=True).exists()
