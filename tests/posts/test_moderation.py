import re

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from feed_project.pagination import Cursor
from posts.models import ModerationLog, Post, Report
from posts.moderation import services as moderation
from posts.search import search
from posts.services import create_post, delete_post
from tests.conftest import PASSWORD
from tests.factories import UserFactory
from timelines.home import home_feed

# Nothing here depends on PostgreSQL: the embedded default moderates too.
pytestmark = pytest.mark.embedded


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


@pytest.fixture
def moderator(db):
    user = UserFactory(username="mod", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="moderate"))
    return user


@pytest.fixture
def alice_posts(alice, bob, django_capture_on_commit_callbacks):
    """Two posts by alice, delivered to bob's inbox."""
    with django_capture_on_commit_callbacks(execute=True):
        return [create_post(author=alice, text=f"needle {n}") for n in range(2)]


def feed_ids(reader) -> list[str]:
    return [item.post.pk for item in home_feed(reader=reader, cursor=Cursor()).items]


def logged(action: str) -> list[tuple]:
    return list(
        ModerationLog.objects.filter(action=action).values_list(
            "moderator__username", "post_id", "user__username"
        )
    )


def test_hide_post_hides_it_and_logs_who_did_it(moderator, alice_posts):
    post = alice_posts[0]

    assert moderation.hide_post(moderator=moderator, post=post, note="spam") is True

    post.refresh_from_db()
    assert post.hidden_at is not None
    assert post.hidden_reason == Post.HiddenReason.MODERATOR
    assert logged(moderation.HIDE_POST) == [("mod", post.pk, "alice")]
    assert ModerationLog.objects.get().note == "spam"


def test_hiding_a_hidden_or_deleted_post_changes_nothing_and_logs_nothing(moderator, alice_posts):
    moderation.hide_post(moderator=moderator, post=alice_posts[0])
    delete_post(post=alice_posts[1])

    assert moderation.hide_post(moderator=moderator, post=alice_posts[0]) is False
    assert moderation.hide_post(moderator=moderator, post=alice_posts[1]) is False
    assert ModerationLog.objects.count() == 1


def test_restore_post_shows_it_again_and_is_logged(moderator, alice_posts):
    post = alice_posts[0]
    moderation.hide_post(moderator=moderator, post=post)

    assert moderation.restore_post(moderator=moderator, post=post) is True

    post.refresh_from_db()
    assert (post.hidden_at, post.hidden_reason) == (None, "")
    assert logged(moderation.RESTORE_POST) == [("mod", post.pk, "alice")]
    assert moderation.restore_post(moderator=moderator, post=post) is False


def test_a_hidden_post_leaves_feed_profile_search_and_detail_for_a_normal_user(
    client, moderator, alice, bob, alice_posts
):
    hidden, kept = alice_posts
    assert set(feed_ids(bob)) == {hidden.pk, kept.pk}

    moderation.hide_post(moderator=moderator, post=hidden)

    client.force_login(bob)
    assert feed_ids(bob) == [kept.pk]
    assert post_ids(client.get("/@alice/")) == [kept.pk]
    assert post_ids(client.get("/search/", {"q": "needle"})) == [kept.pk]
    assert [p.pk for p in search(query="needle", viewer=bob, cursor=Cursor()).posts.items] == [
        kept.pk
    ]
    assert client.get(f"/posts/{hidden.pk}/").status_code == 404
    client.logout()
    assert client.get(f"/posts/{hidden.pk}/").status_code == 404


def test_a_moderator_opens_a_hidden_post_and_sees_the_hidden_banner(client, moderator, alice_posts):
    hidden = alice_posts[0]
    moderation.hide_post(moderator=moderator, post=hidden)
    client.force_login(moderator)

    response = client.get(f"/posts/{hidden.pk}/")

    assert response.status_code == 200
    assert post_ids(response) == [hidden.pk]
    assert b"<strong>Hidden</strong>" in response.content


def test_moderators_are_active_staff_with_the_permission(moderator):
    permission = Permission.objects.get(codename="moderate")
    reader = UserFactory(username="reader")
    reader.user_permissions.add(permission)  # not staff: the admin would not let them in
    staff = UserFactory(username="staff", is_staff=True)  # staff, not a moderator
    superuser = UserFactory(username="root", is_superuser=True)
    suspended = UserFactory(username="gone", is_staff=True, is_active=False)
    suspended.user_permissions.add(permission)

    def fresh(user):  # permissions are cached on the instance
        return type(user).objects.get(pk=user.pk)

    assert moderation.is_moderator(fresh(moderator))
    assert moderation.is_moderator(fresh(superuser))
    for user in (reader, staff, suspended):
        assert not moderation.is_moderator(fresh(user)), user.username
    assert not moderation.is_moderator(AnonymousUser())


def test_a_readers_post_page_never_loads_permissions(client, bob, alice_posts):
    client.force_login(bob)

    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/posts/{alice_posts[0].pk}/").status_code == 200

    assert not [q for q in queries if "auth_permission" in q["sql"]]


def test_a_moderator_still_gets_404_for_a_deleted_or_malformed_post(client, moderator, alice_posts):
    delete_post(post=alice_posts[0])
    client.force_login(moderator)

    assert client.get(f"/posts/{alice_posts[0].pk}/").status_code == 404
    assert client.get("/posts/not-a-post/").status_code == 404


def test_suspend_user_deactivates_hides_their_posts_and_logs_it(moderator, alice, alice_posts):
    assert moderation.suspend_user(moderator=moderator, user=alice, note="abuse") is True

    alice.refresh_from_db()
    assert alice.is_active is False
    reasons = set(Post.objects.by_author(alice.pk).values_list("hidden_reason", flat=True))
    assert reasons == {Post.HiddenReason.SUSPENSION}
    assert logged(moderation.SUSPEND_USER) == [("mod", None, "alice")]
    assert ModerationLog.objects.get().note == "abuse (2 post(s) hidden)"
    assert moderation.suspend_user(moderator=moderator, user=alice) is False


def test_a_suspended_user_cannot_log_in(client, moderator, alice):
    moderation.suspend_user(moderator=moderator, user=alice)

    assert client.login(username="alice", password=PASSWORD) is False
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 200  # the form again, with its error
    assert not response.wsgi_request.user.is_authenticated


def test_a_suspended_users_existing_session_ends_and_they_cannot_post(client, moderator, alice):
    client.force_login(alice)
    assert client.get("/").wsgi_request.user == alice

    moderation.suspend_user(moderator=moderator, user=alice)

    assert not client.get("/").wsgi_request.user.is_authenticated
    response = client.post("/posts/new/", {"text": "still here?"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not Post.objects.by_author(alice.pk).exists()


def test_unsuspend_restores_only_the_posts_the_suspension_hid(moderator, alice, bob, alice_posts):
    by_moderator, by_suspension = alice_posts
    moderation.hide_post(moderator=moderator, post=by_moderator)
    moderation.suspend_user(moderator=moderator, user=alice)
    assert feed_ids(bob) == []

    assert moderation.unsuspend_user(moderator=moderator, user=alice) is True

    alice.refresh_from_db()
    assert alice.is_active is True
    assert feed_ids(bob) == [by_suspension.pk]
    by_moderator.refresh_from_db()
    assert by_moderator.hidden_reason == Post.HiddenReason.MODERATOR
    assert logged(moderation.UNSUSPEND_USER) == [("mod", None, "alice")]
    assert moderation.unsuspend_user(moderator=moderator, user=alice) is False


def test_hiding_a_post_of_a_suspended_user_keeps_it_hidden_after_unsuspension(
    moderator, alice, alice_posts
):
    moderation.suspend_user(moderator=moderator, user=alice)
    assert moderation.hide_post(moderator=moderator, post=alice_posts[0]) is True

    moderation.unsuspend_user(moderator=moderator, user=alice)

    assert list(Post.objects.by_author(alice.pk).visible()) == [alice_posts[1]]


def test_report_files_one_open_report_per_reporter_and_target(alice, bob, alice_posts):
    post = alice_posts[0]

    first = moderation.report(reporter=bob, user=alice, post=post, reason="spam")
    again = moderation.report(reporter=bob, user=alice, post=post, reason="spam!")
    profile = moderation.report(reporter=bob, user=alice)

    assert again == first
    assert profile != first
    assert Report.objects.count() == 2
    assert (first.status, first.reason, first.post, first.user) == ("open", "spam", post, alice)


def test_resolving_a_report_by_hiding_the_post_closes_every_open_report_on_it(
    moderator, alice, bob, carol, alice_posts
):
    post = alice_posts[0]
    by_bob = moderation.report(reporter=bob, user=alice, post=post)
    by_carol = moderation.report(reporter=carol, user=alice, post=post)
    on_profile = moderation.report(reporter=carol, user=alice)

    assert moderation.resolve_report(moderator=moderator, report=by_bob, action="hide_post")

    for report in (by_bob, by_carol, on_profile):
        report.refresh_from_db()
    assert (by_bob.status, by_bob.action, by_bob.resolved_by) == (
        "actioned",
        "hide_post",
        moderator,
    )
    assert by_carol.status == "actioned"
    assert on_profile.status == "open"
    assert not Post.objects.visible().filter(pk=post.pk).exists()
    assert logged(moderation.HIDE_POST) == [("mod", post.pk, "alice")]
    assert (
        moderation.resolve_report(moderator=moderator, report=by_bob, action="dismiss_report")
        is False
    )


def test_resolving_a_report_by_suspending_the_user_suspends_and_logs(
    moderator, alice, bob, alice_posts
):
    report = moderation.report(reporter=bob, user=alice)

    moderation.resolve_report(moderator=moderator, report=report, action="suspend_user")

    report.refresh_from_db()
    alice.refresh_from_db()
    assert (report.status, report.action, alice.is_active) == ("actioned", "suspend_user", False)
    assert logged(moderation.SUSPEND_USER) == [("mod", None, "alice")]


def test_dismissing_a_report_changes_nothing_but_the_report_and_is_logged(
    moderator, alice, bob, alice_posts
):
    report = moderation.report(reporter=bob, user=alice, post=alice_posts[0])

    assert moderation.dismiss_report(moderator=moderator, report=report) is True

    report.refresh_from_db()
    assert (report.status, report.resolved_by) == ("dismissed", moderator)
    assert Post.objects.visible().filter(pk=alice_posts[0].pk).exists()
    assert logged(moderation.DISMISS_REPORT) == [("mod", alice_posts[0].pk, "alice")]


def test_a_report_on_a_post_already_hidden_is_still_closed_and_logged(
    moderator, alice, bob, alice_posts
):
    report = moderation.report(reporter=bob, user=alice, post=alice_posts[0])
    moderation.hide_post(moderator=moderator, post=alice_posts[0])

    moderation.resolve_report(moderator=moderator, report=report, action="hide_post")

    report.refresh_from_db()
    assert report.status == "actioned"
    assert len(logged(moderation.HIDE_POST)) == 2


def test_report_button_files_a_report_and_thanks_the_reporter(client, alice, bob, alice_posts):
    client.force_login(bob)
    post = alice_posts[0]

    response = client.post(
        f"/posts/{post.pk}/report/", {"reason": "spam", "next": "/@alice/"}, follow=True
    )

    assert response.redirect_chain == [("/@alice/", 302)]
    assert b"Thanks, a moderator will look at it" in response.content
    assert Report.objects.get().post == post
    response = client.post("/@alice/report/", {"reason": "impersonation"})
    assert response.status_code == 302
    assert Report.objects.filter(post=None, user=alice, reporter=bob).exists()


def test_reporting_yourself_or_a_missing_post_is_refused_clearly(client, alice, alice_posts):
    client.force_login(alice)

    assert client.post(f"/posts/{alice_posts[0].pk}/report/").status_code == 400
    assert client.post("/@alice/report/").status_code == 400
    assert client.post("/posts/0000000000000000/report/").status_code == 404
    assert client.post("/posts/nonsense/report/").status_code == 404
    assert client.post("/@nobody/report/").status_code == 404
    assert client.post("/@bob/report/", {"reason": "x" * 501}).status_code == 400
    assert not Report.objects.exists()


def test_a_post_and_profile_show_a_report_button_to_others_only(client, alice, bob, alice_posts):
    client.force_login(bob)
    assert f"/posts/{alice_posts[0].pk}/report/".encode() in client.get("/@alice/").content
    assert b"/@alice/report/" in client.get("/@alice/").content

    client.force_login(alice)
    assert b"/report/" not in client.get("/@alice/").content
