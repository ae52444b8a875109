"""Notifications: what makes one, the page, the unread count, and @mentions as links."""

import re

import pytest
from django.db import connection
from django.template import Context, Template
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from feed_project import sharding
from posts.services import create_post, delete_post, repost, unlike
from relations.services import block, follow, unfollow
from tests.factories import UserFactory
from timelines.models import Notification
from timelines.notifications import services as notifications

Kind = Notification.Kind


def unread(user: User) -> int:
    return User.objects.get(pk=user.pk).unread_notifications


def kinds_for(user: User) -> list[tuple[str, str, str | None]]:
    rows = Notification.objects.filter(recipient=user).order_by("id")
    return [(n.kind, n.actor.username, n.post_id) for n in rows]


def note_ids(response) -> list[str]:
    return re.findall(r'data-notification-id="(\d+)"', response.content.decode())


def link(response, rel: str) -> str | None:
    found = re.search(rf'<a rel="{rel}" href="([^"]+)"', response.content.decode())
    return found.group(1) if found else None


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Run what the block schedules on commit (signals, then the eager tasks)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


# --- The service -------------------------------------------------------------------


def test_notify_writes_once_and_counts_once(alice, carol):
    post = create_post(author=alice, text="hi")

    assert notifications.notify(
        recipient_id=alice.pk, kind=Kind.LIKE, actor_id=carol.pk, post_id=post.pk
    )
    assert not notifications.notify(
        recipient_id=alice.pk, kind=Kind.LIKE, actor_id=carol.pk, post_id=post.pk
    )
    assert notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=carol.pk)
    assert not notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=carol.pk)

    assert Notification.objects.count() == 2
    assert unread(alice) == 2


def test_nobody_is_notified_of_their_own_doing(alice):
    assert not notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=alice.pk)
    assert unread(alice) == 0


@pytest.mark.parametrize("who_blocks", ["recipient", "actor"])
def test_nobody_is_notified_across_a_block(alice, carol, who_blocks):
    if who_blocks == "recipient":
        block(user=alice, target=carol)
    else:
        block(user=carol, target=alice)

    assert not notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=carol.pk)
    assert not Notification.objects.exists()
    assert unread(alice) == 0


# --- What makes one ---------------------------------------------------------------


@pytest.mark.embedded
def test_a_follow_notifies_the_person_followed(client, alice, carol, on_commit):
    client.force_login(carol)

    with on_commit():
        client.post("/@alice/follow/")

    assert kinds_for(alice) == [("follow", "carol", None)]
    assert unread(alice) == 1
    page = client.get("/notifications/")  # carol's own page: nothing for her
    assert note_ids(page) == []


def test_following_again_after_an_unfollow_does_not_notify_twice(alice, carol, on_commit):
    with on_commit():
        follow(follower=carol, followee=alice)
    unfollow(follower=carol, followee=alice)
    with on_commit():
        follow(follower=carol, followee=alice)

    assert kinds_for(alice) == [("follow", "carol", None)]
    assert unread(alice) == 1


def test_a_reply_notifies_the_author_replied_to(alice, carol, on_commit):
    post = create_post(author=alice, text="question")

    with on_commit():
        reply = create_post(author=carol, text="answer", in_reply_to=post)

    assert kinds_for(alice) == [("reply", "carol", reply.pk)]


def test_replying_to_yourself_notifies_nobody(alice, on_commit):
    post = create_post(author=alice, text="thread 1/2")

    with on_commit():
        create_post(author=alice, text="thread 2/2", in_reply_to=post)

    assert not Notification.objects.exists()


def test_a_repost_notifies_the_original_author(alice, carol, on_commit):
    post = create_post(author=alice, text="share me")

    with on_commit():
        repost(user=carol, post=post)

    assert kinds_for(alice) == [("repost", "carol", post.pk)]


def test_a_like_notifies_the_author_once_however_often_it_is_taken_back(
    alice_client, alice, carol, on_commit
):
    post = create_post(author=carol, text="likeable")

    for _ in range(3):
        with on_commit():
            alice_client.post(f"/posts/{post.pk}/like/")
        unlike(user=alice, post=post)

    assert kinds_for(carol) == [("like", "alice", post.pk)]
    assert unread(carol) == 1


def test_mentions_notify_existing_people_whatever_the_case(alice, bob, carol, on_commit):
    with on_commit():
        post = create_post(
            author=carol, text="Hi @ALICE and @bob, @nobody, @carol, mail me at x@bob.example"
        )

    mentions = Notification.objects.filter(kind=Kind.MENTION, post=post, actor=carol)
    assert sorted(mentions.values_list("recipient__username", flat=True)) == ["alice", "bob"]
    assert not Notification.objects.filter(recipient=carol).exists()


def test_a_post_mentions_at_most_ten_people(carol, on_commit):
    people = [UserFactory(username=f"fan{n}") for n in range(12)]
    text = " ".join(f"@{person.username}" for person in people)

    with on_commit():
        create_post(author=carol, text=text)

    notified = set(Notification.objects.values_list("recipient__username", flat=True))
    assert notified == {f"fan{n}" for n in range(10)}


def test_a_mention_by_someone_blocked_either_way_notifies_nobody(alice, carol, on_commit):
    block(user=alice, target=carol)

    with on_commit():
        create_post(author=carol, text="@alice hello")

    assert not Notification.objects.exists()


# --- The page -------------------------------------------------------------------------


def test_the_page_lists_notifications_newest_first_with_unread_ones_marked(
    alice_client, alice, carol
):
    post = create_post(author=alice, text="<b>my</b> post")
    notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=carol.pk)
    notifications.notify(recipient_id=alice.pk, kind=Kind.LIKE, actor_id=carol.pk, post_id=post.pk)
    Notification.objects.filter(kind=Kind.FOLLOW).update(read_at="2026-01-01T00:00:00Z")

    response = alice_client.get("/notifications/")

    assert response.status_code == 200
    ids = list(Notification.objects.order_by("-id").values_list("id", flat=True))
    assert note_ids(response) == [str(i) for i in ids]
    content = response.content.decode()
    assert content.count('class="notification unread"') == 1
    assert "liked your post" in content and "followed you" in content
    assert "&lt;b&gt;my&lt;/b&gt; post" in content


def test_the_page_says_when_a_post_is_gone(alice_client, alice, carol):
    post = create_post(author=alice, text="soon gone")
    notifications.notify(recipient_id=alice.pk, kind=Kind.LIKE, actor_id=carol.pk, post_id=post.pk)
    delete_post(post=post)

    content = alice_client.get("/notifications/").content.decode()

    assert "the post is no longer available" in content


def test_the_page_is_cursor_paginated(alice_client, alice):
    for n in range(33):
        actor = UserFactory(username=f"fan{n}")
        notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=actor.pk)
    newest_first = [
        str(i) for i in Notification.objects.order_by("-id").values_list("id", flat=True)
    ]

    first = alice_client.get("/notifications/")
    assert note_ids(first) == newest_first[:30]
    assert link(first, "next") == f"?before={newest_first[29]}"
    second = alice_client.get("/notifications/" + link(first, "next"))
    assert note_ids(second) == newest_first[30:]
    assert link(second, "next") is None
    back = alice_client.get("/notifications/" + link(second, "prev"))
    assert note_ids(back) == newest_first[:30]


@pytest.mark.parametrize("cursor", ["?before=abc", "?before=-1", "?after=1e9", "?before=1&after=x"])
def test_a_bad_cursor_is_a_400(alice_client, cursor):
    assert alice_client.get("/notifications/" + cursor).status_code == 400


def test_notifications_from_people_blocked_later_are_hidden(alice_client, alice, carol):
    notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=carol.pk)
    block(user=carol, target=alice)

    assert note_ids(alice_client.get("/notifications/")) == []


def test_the_page_needs_login(client, db):
    response = client.get("/notifications/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_mark_all_read_marks_them_and_resets_the_count(alice_client, alice, carol, bob):
    notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=carol.pk)
    notifications.notify(recipient_id=alice.pk, kind=Kind.FOLLOW, actor_id=bob.pk)
    notifications.notify(recipient_id=bob.pk, kind=Kind.FOLLOW, actor_id=carol.pk)
    home = alice_client.get("/").content.decode()
    assert '<span class="badge" aria-label="2 unread">2</span>' in home
    assert "Mark all read" in alice_client.get("/notifications/").content.decode()

    response = alice_client.post("/notifications/read/", follow=True)

    assert response.redirect_chain == [("/notifications/", 302)]
    assert unread(alice) == 0
    assert not Notification.objects.filter(recipient=alice, read_at__isnull=True).exists()
    assert Notification.objects.filter(recipient=bob, read_at__isnull=True).count() == 1
    assert unread(bob) == 1
    content = response.content.decode()
    assert 'class="badge"' not in content
    assert 'class="notification unread"' not in content


def test_mark_all_read_is_post_only(alice_client):
    assert alice_client.get("/notifications/read/").status_code == 405


def test_notifications_query_count_does_not_grow_with_the_page(client, alice, carol):
    client.force_login(alice)
    client.get("/notifications/")  # the session's first request records last-active
    counts = []
    for total in (2, 20):
        while Notification.objects.filter(recipient=alice).count() < total:
            n = Notification.objects.count()
            actor = UserFactory(username=f"fan{n}")
            post = create_post(author=alice, text=f"post {n}")
            kind = (Kind.LIKE, Kind.REPOST, Kind.FOLLOW)[n % 3]
            notifications.notify(
                recipient_id=alice.pk,
                kind=kind,
                actor_id=actor.pk,
                post_id=None if kind == Kind.FOLLOW else post.pk,
            )
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/notifications/")
        assert len(note_ids(response)) == total
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    # Session, user, the page, its actors, its posts (the nav's count is on the user);
    # on Citus one more: the viewer's muted words, read before the posts.
    assert counts[0] <= (6 if sharding.on_citus(connection) else 5), counts


# --- Mentions as links --------------------------------------------------------------


def render_text(text: str) -> str:
    return Template("{% load post_text %}{{ text|linkify }}").render(Context({"text": text}))


def test_linkify_links_mentions_to_profiles():
    html = render_text("Hi @alice and @Bob_2! mail: me@carol.example")

    assert html == (
        'Hi <a class="mention" href="/@alice/">@alice</a> and '
        '<a class="mention" href="/@Bob_2/">@Bob_2</a>! mail: me@carol.example'
    )


def test_linkify_escapes_before_it_links():
    html = render_text('<script>alert("@alice")</script> @<b>x</b> @alice"onmouseover=x')

    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&quot;" in html
    assert '<a class="mention" href="/@alice/">@alice</a>&quot;onmouseover=x' in html
    assert "@&lt;b&gt;x&lt;/b&gt;" in html


def test_mentions_in_posts_are_links_on_the_pages(client, alice, carol):
    post = create_post(author=carol, text="Thanks @alice <3")

    content = client.get(f"/posts/{post.pk}/").content.decode()

    assert 'Thanks <a class="mention" href="/@alice/">@alice</a> &lt;3' in content
