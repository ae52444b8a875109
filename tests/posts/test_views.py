import re

import pytest

from accounts.models import User
from posts.models import Post
from posts.services import create_post, delete_post

NEW_POST = "/posts/new/"


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


@pytest.fixture
def alice_post(alice):
    return create_post(author=alice, text="Hello from Alice")


@pytest.mark.embedded
def test_posting_publishes_the_post_and_shows_it_on_home_and_profile(
    alice_client, alice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(NEW_POST, {"text": "  First post!  "})

    assert response.status_code == 302
    assert response["Location"] == "/"
    post = Post.objects.get()
    assert (post.author, post.text) == (alice, "First post!")
    assert User.objects.get(pk=alice.pk).posts_count == 1
    assert post_ids(alice_client.get("/")) == [post.pk]
    assert post_ids(alice_client.get("/@alice/")) == [post.pk]


@pytest.mark.parametrize(
    "text", ["", "   ", "\r\n\t ", "x" * 501], ids=["empty", "spaces", "whitespace", "501-chars"]
)
def test_posting_bad_text_is_rejected_with_a_form_error_and_writes_nothing(
    alice_client, alice, text
):
    response = alice_client.post(NEW_POST, {"text": text})

    assert response.status_code == 400
    assert response.context["form"].errors["text"]
    assert b'class="errorlist' in response.content
    assert not Post.objects.exists()
    assert User.objects.get(pk=alice.pk).posts_count == 0


def test_posting_keeps_the_rejected_text_in_the_form(alice_client):
    response = alice_client.post(NEW_POST, {"text": "y" * 501})

    assert ("y" * 501).encode() in response.content


def test_posting_exactly_500_characters_is_accepted(alice_client):
    response = alice_client.post(NEW_POST, {"text": "x" * 500})

    assert response.status_code == 302
    assert len(Post.objects.get().text) == 500


def test_posting_counts_a_browser_line_break_as_one_character(alice_client):
    text = "x" * 249 + "\r\n" + "y" * 250  # 501 bytes as sent, 500 characters

    response = alice_client.post(NEW_POST, {"text": text})

    assert response.status_code == 302
    assert Post.objects.get().text == "x" * 249 + "\n" + "y" * 250


def test_posting_a_null_character_is_rejected(alice_client):
    response = alice_client.post(NEW_POST, {"text": "bad\x00byte"})

    assert response.status_code == 400
    assert not Post.objects.exists()


def test_posting_with_in_reply_to_replies_and_a_blank_one_is_a_post_of_its_own(
    alice_client, alice_post
):
    for reply_to in (alice_post.pk, ""):
        response = alice_client.post(NEW_POST, {"text": "Reply", "in_reply_to": reply_to})
        assert response.status_code == 302
    assert Post.objects.count() == 3
    assert Post.objects.filter(in_reply_to=alice_post).count() == 1


def test_posting_in_reply_to_nonsense_is_a_404_and_writes_nothing(alice_client, alice_post):
    response = alice_client.post(NEW_POST, {"text": "Reply", "in_reply_to": "nonsense"})

    assert response.status_code == 404
    assert Post.objects.count() == 1


@pytest.mark.django_db
def test_posting_needs_login(client):
    response = client.post(NEW_POST, {"text": "Anonymous"})

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert not Post.objects.exists()


def test_new_post_by_get_is_405(alice_client):
    assert alice_client.get(NEW_POST).status_code == 405


def test_post_text_is_escaped(alice_client, alice):
    post = create_post(author=alice, text='<script>alert("x")</script> & <b>bold</b>')

    content = alice_client.get(f"/posts/{post.pk}/").content.decode()

    assert "<script>alert" not in content
    assert (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in content
    )


@pytest.mark.django_db
def test_detail_shows_the_post_to_anyone(client, alice_post):
    response = client.get(f"/posts/{alice_post.pk}/")

    assert response.status_code == 200
    assert post_ids(response) == [alice_post.pk]
    content = response.content.decode()
    assert "Hello from Alice" in content
    assert 'href="/@alice/"' in content
    assert f'<time datetime="{alice_post.created_at.isoformat()}" title=' in content
    assert "/delete/" not in content


@pytest.mark.parametrize(
    "post_id",
    ["0000000000000000", "short", "lowercase0000000", "ZZZZZZZZZZZZZZZZZ", "%00"],
)
@pytest.mark.django_db
def test_detail_of_an_unknown_or_malformed_id_is_404(client, post_id):
    response = client.get(f"/posts/{post_id}/")

    assert response.status_code == 404
    assert b"Not found" in response.content


def test_detail_of_a_deleted_post_is_404(client, alice_post):
    delete_post(post=alice_post)

    assert client.get(f"/posts/{alice_post.pk}/").status_code == 404


def test_delete_button_is_shown_to_the_author_only(client, alice, bob, alice_post):
    url = f"/posts/{alice_post.pk}/"
    delete_action = f'action="/posts/{alice_post.pk}/delete/"'.encode()

    client.force_login(alice)
    assert delete_action in client.get(url).content
    client.force_login(bob)
    assert delete_action not in client.get(url).content


def test_author_deletes_their_post(alice_client, alice, alice_post):
    response = alice_client.post(f"/posts/{alice_post.pk}/delete/")

    assert response.status_code == 302
    assert response["Location"] == "/@alice/"
    alice_post.refresh_from_db()
    assert alice_post.is_deleted
    assert User.objects.get(pk=alice.pk).posts_count == 0
    assert alice_client.get(f"/posts/{alice_post.pk}/").status_code == 404


def test_delete_returns_to_a_safe_next_but_not_to_the_deleted_post(alice_client, alice):
    first = create_post(author=alice, text="one")
    second = create_post(author=alice, text="two")
    third = create_post(author=alice, text="three")

    to_home = alice_client.post(f"/posts/{first.pk}/delete/", {"next": "/?before=X"})
    to_detail = alice_client.post(f"/posts/{second.pk}/delete/", {"next": f"/posts/{second.pk}/"})
    offsite = alice_client.post(f"/posts/{third.pk}/delete/", {"next": "//evil.example/"})

    assert to_home["Location"] == "/?before=X"
    assert to_detail["Location"] == "/@alice/"
    assert offsite["Location"] == "/@alice/"


def test_deleting_someone_elses_post_is_refused(client, bob, alice_post):
    client.force_login(bob)

    response = client.post(f"/posts/{alice_post.pk}/delete/")

    assert response.status_code == 403
    assert b"Not allowed" in response.content
    alice_post.refresh_from_db()
    assert not alice_post.is_deleted


def test_deleting_needs_login(client, alice_post):
    response = client.post(f"/posts/{alice_post.pk}/delete/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    alice_post.refresh_from_db()
    assert not alice_post.is_deleted


def test_delete_by_get_is_405(alice_client, alice_post):
    assert alice_client.get(f"/posts/{alice_post.pk}/delete/").status_code == 405
    alice_post.refresh_from_db()
    assert not alice_post.is_deleted


def test_deleting_an_unknown_or_deleted_post_is_404(alice_client, alice_post):
    delete_post(post=alice_post)

    assert alice_client.post(f"/posts/{alice_post.pk}/delete/").status_code == 404
    assert alice_client.post("/posts/nonsense/delete/").status_code == 404


@pytest.mark.django_db
def test_detail_answers_head_requests(client, alice_post):
    assert client.head(f"/posts/{alice_post.pk}/").status_code == 200
