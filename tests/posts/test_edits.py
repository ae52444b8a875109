"""Editing a post: the form, the history, feeds, search, tags and mentions follow, notifications."""

import re

import pytest

from posts.content_models import PostEdit
from posts.edits import edit_post, history
from posts.models import Post, PostMedia
from posts.services import create_post, delete_post, like, repost
from tests import images
from tests.factories import UserFactory
from timelines.notifications.models import Notification
from timelines.notifications.services import notify_edited


def post_ids(response) -> list[str]:
    return re.findall(
        r'<article class="post" data-post-id="([0-9A-Z]+)"', response.content.decode()
    )


@pytest.mark.embedded
def test_the_author_edits_at_the_edit_page_and_the_post_says_edited(client, alice):
    post = create_post(author=alice, text="frist post")
    client.force_login(alice)

    form = client.get(f"/posts/{post.pk}/edit/")
    assert form.status_code == 200 and "frist post" in form.content.decode()
    response = client.post(f"/posts/{post.pk}/edit/", {"text": "first post", "spoiler_text": ""})

    assert response.status_code == 302 and response["Location"] == f"/posts/{post.pk}/"
    post.refresh_from_db()
    assert post.text == "first post" and post.edited_at is not None
    page = client.get(f"/posts/{post.pk}/").content.decode()
    assert "first post" in page
    assert re.search(rf'<a class="post-edited" href="/posts/{post.pk}/history/">edited <time', page)


@pytest.mark.embedded
def test_history_lists_every_version_newest_first(client, alice):
    post = create_post(author=alice, text="one")
    edit_post(post=post, changes={"text": "two"})
    edit_post(post=post, changes={"text": "three"})
    assert not edit_post(post=post, changes={"text": "three"})  # no change, no version

    assert [v.text for v in history(post)] == ["three", "two", "one"]
    html = client.get(f"/posts/{post.pk}/history/").content.decode()
    assert re.findall(r'<p class="post-text">(\w+)</p>', html) == ["three", "two", "one"]
    assert PostEdit.objects.filter(post_id=post.pk).count() == 2


@pytest.mark.embedded
@pytest.mark.parametrize("method", ["get", "post"])
def test_editing_someone_else_s_post_is_forbidden(client, alice, carol, method):
    post = create_post(author=alice, text="mine")
    client.force_login(carol)

    response = getattr(client, method)(f"/posts/{post.pk}/edit/", {"text": "yours now"})

    assert response.status_code == 403
    post.refresh_from_db()
    assert post.text == "mine"


@pytest.mark.embedded
@pytest.mark.parametrize("post_id", ["nonsense", "0" * 16, "ZZZZZZZZZZZZZZZZ"])
def test_editing_a_post_that_is_not_there_is_a_404(client, alice, post_id):
    client.force_login(alice)

    assert client.post(f"/posts/{post_id}/edit/", {"text": "x"}).status_code == 404
    assert client.get(f"/posts/{post_id}/history/").status_code == 404


@pytest.mark.embedded
def test_a_deleted_post_or_a_repost_cannot_be_edited(client, alice, carol):
    gone = create_post(author=alice, text="gone")
    delete_post(post=gone)
    shared = repost(user=alice, post=create_post(author=carol, text="theirs"))
    client.force_login(alice)

    assert client.post(f"/posts/{gone.pk}/edit/", {"text": "x"}).status_code == 404
    assert client.post(f"/posts/{shared.pk}/edit/", {"text": "x"}).status_code == 403


@pytest.mark.embedded
@pytest.mark.parametrize("text", ["", "   ", "x" * 501])
def test_an_edit_with_bad_text_is_a_form_error(client, alice, text):
    post = create_post(author=alice, text="fine")
    client.force_login(alice)

    response = client.post(f"/posts/{post.pk}/edit/", {"text": text})

    assert response.status_code == 400
    assert 'class="errorlist' in response.content.decode()
    post.refresh_from_db()
    assert post.text == "fine" and post.edited_at is None


@pytest.mark.embedded
def test_feeds_show_the_current_version_at_once(
    client, alice, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post = create_post(author=alice, text="before the edit")
    client.force_login(bob)
    assert "before the edit" in client.get("/").content.decode()

    edit_post(post=post, changes={"text": "after the edit"})

    home = client.get("/").content.decode()
    assert "after the edit" in home and "before the edit" not in home


def test_search_and_tags_follow_the_edit(client, alice):
    post = create_post(author=alice, text="zebra #stripes")
    edit_post(post=post, changes={"text": "giraffe #spots"})

    def found(q):
        return post_ids(client.get("/search/", {"q": q}))

    assert found("zebra") == [] and found("giraffe") == [post.pk]
    assert found("#stripes") == [] and found("#spots") == [post.pk]
    assert post_ids(client.get("/tags/spots/")) == [post.pk]
    assert post_ids(client.get("/tags/stripes/")) == []


@pytest.mark.embedded
def test_mentions_follow_the_edit(client, alice, carol, django_capture_on_commit_callbacks):
    post = create_post(author=alice, text="hello @nobody")
    with django_capture_on_commit_callbacks(execute=True):
        edit_post(post=post, changes={"text": "hello @carol"})

    assert Notification.objects.filter(recipient=carol, kind="mention", post_id=post.pk).exists()
    assert 'href="/@carol/">@carol</a>' in client.get(f"/posts/{post.pk}/").content.decode()


@pytest.mark.embedded
def test_who_replied_liked_or_reposted_is_notified_once_per_edit(
    alice, carol, django_capture_on_commit_callbacks
):
    replier, liker, reposter, bystander = (UserFactory() for _ in range(4))
    post = create_post(author=alice, text="v1")
    with django_capture_on_commit_callbacks(execute=True):
        create_post(author=replier, text="re", in_reply_to=post)
        like(user=liker, post=post)
        repost(user=reposter, post=post)
        like(user=alice, post=post)  # the author is never told of their own edit
    for text in ("v2", "v3"):
        with django_capture_on_commit_callbacks(execute=True):
            edit_post(post=post, changes={"text": text})

    edited = Notification.objects.filter(kind="edited", post_id=post.pk)
    assert sorted(edited.values_list("recipient_id", "edit")) == sorted(
        (person.pk, version) for person in (replier, liker, reposter) for version in (1, 2)
    )
    assert not edited.filter(recipient__in=[alice, bystander]).exists()
    replier.refresh_from_db()
    assert replier.unread_notifications == 2  # one a version
    # A retried task (or the sweeper) notifies no one twice.
    assert notify_edited(post_id=post.pk, version=2) == 0


def test_an_edit_changes_only_the_editable_fields(alice):
    post = create_post(author=alice, text="t")
    assert edit_post(post=post, changes={"text": "u", "not_a_field": "x"})
    assert Post.objects.get(pk=post.pk).text == "u"


@pytest.mark.embedded
def test_the_author_edits_the_content_warning_and_the_history_keeps_the_old_one(client, alice):
    post = create_post(author=alice, text="the ending", spoiler_text="spoilers")
    client.force_login(alice)

    client.post(f"/posts/{post.pk}/edit/", {"text": "the ending", "spoiler_text": "film ending"})

    post.refresh_from_db()
    assert post.spoiler_text == "film ending" and post.edited_at is not None
    page = client.get(f"/posts/{post.pk}/").content.decode()
    assert re.search(r"<summary>.*film ending</summary>", page)
    versions = history(post)
    assert [v.spoiler_text for v in versions] == ["film ending", "spoilers"]
    history_page = client.get(f"/posts/{post.pk}/history/").content.decode()
    assert "Content warning: spoilers" in history_page


@pytest.mark.embedded
def test_the_author_edits_the_descriptions_of_the_images_not_the_images(client, alice, media_root):
    client.force_login(alice)
    upload = [
        images.upload("a.png", images.image_bytes("PNG", (40, 30)), "image/png"),
        images.upload("b.png", images.image_bytes("PNG", (30, 40)), "image/png"),
    ]
    client.post("/posts/new/", {"text": "two", "media": upload, "media_alt": ["cat", "dog"]})
    post = Post.objects.get(author=alice)
    form = client.get(f"/posts/{post.pk}/edit/").content.decode()
    assert ">cat</textarea>" in form and ">dog</textarea>" in form

    client.post(
        f"/posts/{post.pk}/edit/",
        {"text": "two", "spoiler_text": "", "media_alt": ["a cat", "dog"]},
    )

    alts = list(PostMedia.objects.filter(post_id=post.pk).order_by("position"))
    assert [m.alt_text for m in alts] == ["a cat", "dog"]
    assert 'alt="a cat"' in client.get(f"/posts/{post.pk}/").content.decode()
    post.refresh_from_db()
    assert post.edited_at is not None


@pytest.mark.embedded
@pytest.mark.parametrize(
    "alts", [["one", "two"], ["x" * 1501]], ids=["more-than-images", "too-long"]
)
def test_bad_descriptions_in_an_edit_are_a_form_error(client, alice, alts, media_root):
    client.force_login(alice)
    upload = [images.upload("a.png", images.image_bytes("PNG", (40, 30)), "image/png")]
    client.post("/posts/new/", {"text": "one", "media": upload, "media_alt": ["cat"]})
    post = Post.objects.get(author=alice)

    response = client.post(
        f"/posts/{post.pk}/edit/", {"text": "changed", "spoiler_text": "", "media_alt": alts}
    )

    assert response.status_code == 400
    post.refresh_from_db()
    assert post.text == "one" and PostMedia.objects.get(post_id=post.pk).alt_text == "cat"
