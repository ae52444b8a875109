"""Answers to actions sent in place (static/js/site.js, header X-Fragment: 1): the post's
article instead of a redirect; without the header, the redirect as before."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from accounts import avatars
from posts import post_html
from posts.models import Post, Report
from posts.services import create_post

FRAGMENT = {"HTTP_X_FRAGMENT": "1"}


@pytest.fixture
def carol_post(carol):
    return create_post(author=carol, text="Carol's post")


def test_a_like_sent_in_place_answers_with_the_post_and_its_new_count(alice_client, carol_post):
    response = alice_client.post(
        f"/posts/{carol_post.pk}/like/", {"next": "/@carol/?before=Z"}, **FRAGMENT
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("<article") == 1
    assert f'data-post-id="{carol_post.pk}"' in html
    assert f'action="/posts/{carol_post.pk}/unlike/"' in html
    assert 'Liked</span> <span class="count">1</span>' in html
    assert 'value="/@carol/?before=Z"' in html  # its forms still come back to the page
    assert "<html" not in html


def test_without_the_header_the_same_like_redirects(alice_client, carol_post):
    response = alice_client.post(f"/posts/{carol_post.pk}/like/", {"next": "/@carol/"})

    assert response.status_code == 302
    assert response["Location"] == "/@carol/"


def test_a_repost_in_place_carries_its_message_with_the_post(alice_client, carol_post):
    html = alice_client.post(f"/posts/{carol_post.pk}/repost/", **FRAGMENT).content.decode()

    assert f'action="/posts/{carol_post.pk}/unrepost/"' in html
    assert "Reposted." in html
    # Shown once: not left waiting for the next page.
    assert "Reposted." not in alice_client.get("/").content.decode()


def test_a_reply_in_place_answers_201_with_the_reply_naming_whom_it_answers(
    alice_client, carol_post
):
    response = alice_client.post(
        "/posts/new/", {"text": "Hi Carol", "in_reply_to": carol_post.pk}, **FRAGMENT
    )

    assert response.status_code == 201
    reply = Post.objects.get(text="Hi Carol")
    html = response.content.decode()
    assert f'data-post-id="{reply.pk}"' in html
    assert "Replying to @carol" in html


def test_a_too_long_post_in_place_is_a_400_and_writes_nothing(alice_client):
    response = alice_client.post("/posts/new/", {"text": "x" * 501}, **FRAGMENT)

    assert response.status_code == 400
    assert not Post.objects.filter(text="x" * 501).exists()


def test_replies_in_a_thread_name_whom_they_answer(client, alice, carol_post):
    reply = create_post(author=alice, text="first", in_reply_to=carol_post)
    create_post(author=carol_post.author, text="second", in_reply_to=reply)

    html = client.get(f"/posts/{reply.pk}/").content.decode()

    assert "Replying to @carol" in html
    assert "Replying to @alice" in html


def test_a_report_keeps_its_category_before_the_text(alice_client, carol_post):
    alice_client.post(
        f"/posts/{carol_post.pk}/report/", {"category": "abuse", "reason": "Name-calling"}
    )
    alice_client.post("/@carol/report/", {"category": "spam"})

    reasons = set(Report.objects.values_list("reason", flat=True))
    assert reasons == {"abuse: Name-calling", "spam"}


def test_a_report_of_an_unknown_category_is_a_400(alice_client, carol_post):
    response = alice_client.post(f"/posts/{carol_post.pk}/report/", {"category": "boring"})

    assert response.status_code == 400
    assert not Report.objects.exists()


@pytest.mark.parametrize(
    ("ago", "shown"),
    [
        (timedelta(seconds=30), "now"),
        (timedelta(minutes=5), "5m"),
        (timedelta(hours=3, minutes=59), "3h"),
        (timedelta(days=4), "20 Nov"),
        (timedelta(days=400), "20 Oct 2025"),
    ],
)
def test_times_read_as_how_long_ago(ago, shown):
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    with override_settings(TIME_ZONE="UTC"), timezone.override("UTC"):
        assert post_html.time_ago(now - ago, now) == shown


def test_a_generated_avatar_is_the_same_for_a_name_and_differs_between_names(client):
    first = client.get("/accounts/avatar/wren.svg")

    assert first.status_code == 200
    assert first["Content-Type"] == "image/svg+xml"
    assert ">W</text>" in first.content.decode()
    assert "immutable" in first["Cache-Control"]
    assert client.get("/accounts/avatar/wren.svg").content == first.content
    colours = {avatars.generated_svg(name).split('fill="')[1] for name in ("a", "b", "c", "d")}
    assert len(colours) > 1
