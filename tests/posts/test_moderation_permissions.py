import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from accounts.models import User
from posts.models import ModerationLog, Post, Report
from posts.moderation import services as moderation
from posts.services import create_post
from relations.services import block
from tests.factories import UserFactory

# Nothing here depends on PostgreSQL: the embedded default moderates too.
pytestmark = pytest.mark.embedded

POSTS = "/admin/posts/post/"
USERS = "/admin/accounts/user/"
REPORTS = "/admin/posts/report/"
LOG = "/admin/posts/moderationlog/"


def grant(user: User, *codenames: str) -> User:
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return User.objects.get(pk=user.pk)  # a fresh object: no cached permissions


@pytest.fixture
def staff(db):
    """Staff who may view and change posts and users, but not moderate."""
    user = UserFactory(username="staff", is_staff=True)
    return grant(user, "view_post", "change_post", "view_user", "change_user", "view_report")


@pytest.fixture
def moderator(db):
    user = UserFactory(username="mod", is_staff=True)
    return grant(user, "view_post", "change_post", "view_user", "change_user", "moderate")


@pytest.fixture
def post(alice):
    return create_post(author=alice, text="a post to moderate")


def run_action(client: Client, url: str, action: str, *pks) -> None:
    client.post(url, {"action": action, "_selected_action": [str(pk) for pk in pks]})


def is_hidden(post: Post) -> bool:
    return Post.objects.filter(pk=post.pk, hidden_at__isnull=False).exists()


def test_staff_without_the_moderate_permission_do_not_see_the_moderation_actions(
    client, staff, post
):
    client.force_login(staff)

    posts_page = client.get(POSTS).content.decode()
    users_page = client.get(USERS).content.decode()

    assert "delete_posts" in posts_page  # their ordinary action is there
    assert "hide_posts" not in posts_page and "restore_posts" not in posts_page
    assert "suspend_users" not in users_page and "unsuspend_users" not in users_page


@pytest.mark.parametrize("action", ["hide_posts", "restore_posts"])
def test_staff_without_the_moderate_permission_cannot_run_post_actions(client, staff, post, action):
    client.force_login(staff)
    Post.objects.filter(pk=post.pk).update(hidden_at=None)

    run_action(client, POSTS, action, post.pk)

    assert not is_hidden(post)
    assert not ModerationLog.objects.exists()


def test_staff_without_the_moderate_permission_cannot_suspend_or_unsuspend(
    client, staff, alice, carol
):
    client.force_login(staff)
    User.objects.filter(pk=carol.pk).update(is_active=False)

    run_action(client, USERS, "suspend_users", alice.pk)
    run_action(client, USERS, "unsuspend_users", carol.pk)

    assert User.objects.get(pk=alice.pk).is_active is True
    assert User.objects.get(pk=carol.pk).is_active is False
    assert not ModerationLog.objects.exists()


def test_staff_without_the_moderate_permission_cannot_open_the_queue_or_the_log(
    client, staff, alice, bob, post
):
    report = moderation.report(reporter=bob, user=alice, post=post)
    client.force_login(staff)

    assert client.get(REPORTS).status_code == 403
    assert client.get(LOG).status_code == 403
    assert client.get(f"{REPORTS}{report.pk}/change/").status_code == 403
    run_action(client, REPORTS, "hide_reported_posts", report.pk)
    assert not is_hidden(post)
    assert Report.objects.get().status == Report.Status.OPEN
    assert b"/admin/posts/report/" not in client.get("/admin/").content


def test_a_plain_user_cannot_reach_the_admin_at_all(client, bob, alice, post):
    client.force_login(bob)

    for url in (POSTS, USERS, REPORTS, LOG):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")
    run_action(client, POSTS, "hide_posts", post.pk)
    run_action(client, USERS, "suspend_users", alice.pk)
    assert not is_hidden(post)
    assert User.objects.get(pk=alice.pk).is_active is True


def test_a_moderator_hides_and_restores_posts_in_bulk_from_the_admin(client, moderator, alice):
    posts = [create_post(author=alice, text=f"bulk {n}") for n in range(3)]
    client.force_login(moderator)

    run_action(client, POSTS, "hide_posts", *(p.pk for p in posts))
    assert all(is_hidden(p) for p in posts)
    hidden_list = client.get(POSTS, {"hidden": "yes"}).content.decode()
    assert all(p.pk in hidden_list for p in posts)

    run_action(client, POSTS, "restore_posts", posts[0].pk)
    assert not is_hidden(posts[0])
    actions = list(ModerationLog.objects.values_list("action", "moderator__username"))
    assert sorted(actions) == [*[("hide_post", "mod")] * 3, ("restore_post", "mod")]


def test_a_moderator_suspends_and_unsuspends_users_from_the_admin(client, moderator, alice):
    client.force_login(moderator)

    run_action(client, USERS, "suspend_users", alice.pk)
    assert User.objects.get(pk=alice.pk).is_active is False

    run_action(client, USERS, "unsuspend_users", alice.pk)
    assert User.objects.get(pk=alice.pk).is_active is True
    assert list(ModerationLog.objects.order_by("pk").values_list("action", flat=True)) == [
        "suspend_user",
        "unsuspend_user",
    ]


def test_a_moderator_cannot_suspend_themselves_by_accident(client, moderator):
    client.force_login(moderator)

    run_action(client, USERS, "suspend_users", moderator.pk)

    assert User.objects.get(pk=moderator.pk).is_active is True


def test_a_moderator_works_the_report_queue_open_reports_first(
    client, moderator, alice, bob, carol, post
):
    old = moderation.report(reporter=carol, user=alice)
    moderation.dismiss_report(moderator=moderator, report=old)
    on_post = moderation.report(reporter=bob, user=alice, post=post)
    on_profile = moderation.report(reporter=bob, user=carol)
    client.force_login(moderator)

    page = client.get(REPORTS).content.decode()
    assert page.index(f'value="{on_profile.pk}"') < page.index(f'value="{old.pk}"')
    assert page.index(f'value="{on_post.pk}"') < page.index(f'value="{old.pk}"')

    run_action(client, REPORTS, "hide_reported_posts", on_post.pk)
    run_action(client, REPORTS, "suspend_reported_users", on_profile.pk)

    on_post.refresh_from_db()
    on_profile.refresh_from_db()
    assert (on_post.status, on_post.action, on_post.resolved_by) == (
        "actioned",
        "hide_post",
        moderator,
    )
    assert (on_profile.status, on_profile.action) == ("actioned", "suspend_user")
    assert is_hidden(post)
    assert User.objects.get(pk=carol.pk).is_active is False
    assert client.get(LOG).status_code == 200


def test_the_report_queue_and_log_are_read_only_even_for_moderators(client, moderator, alice, bob):
    report = moderation.report(reporter=bob, user=alice)
    client.force_login(moderator)

    client.post(f"{REPORTS}{report.pk}/change/", {"status": "dismissed", "reason": "edited"})
    client.post(f"{REPORTS}{report.pk}/delete/", {"post": "yes"})

    assert client.get(f"{REPORTS}add/").status_code == 403
    report.refresh_from_db()
    assert (report.status, report.reason) == ("open", "")


def test_report_endpoints_require_post_and_login(client, alice, post):
    assert client.get(f"/posts/{post.pk}/report/").status_code == 405
    assert client.get("/@alice/report/").status_code == 405
    for url in (f"/posts/{post.pk}/report/", "/@alice/report/"):
        response = client.post(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    assert not Report.objects.exists()


def test_report_endpoints_require_csrf(alice, bob, post):
    client = Client(enforce_csrf_checks=True)
    client.force_login(bob)

    assert client.post(f"/posts/{post.pk}/report/").status_code == 403
    assert client.post("/@alice/report/").status_code == 403
    assert not Report.objects.exists()


def test_a_report_is_always_filed_by_the_signed_in_user(client, alice, bob, carol, post):
    client.force_login(bob)

    client.post(f"/posts/{post.pk}/report/", {"reporter": carol.pk, "user": carol.pk})

    report = Report.objects.get()
    assert (report.reporter, report.user, report.post) == (bob, alice, post)


@pytest.mark.parametrize("blocker", ["author", "reporter"])
def test_reports_honour_blocks_either_way(client, alice, carol, post, blocker):
    """A post or person the reporter may not see is a 404, as for every other action."""
    if blocker == "author":
        block(user=alice, target=carol)
    else:
        block(user=carol, target=alice)
    client.force_login(carol)

    assert client.post(f"/posts/{post.pk}/report/", {"reason": "spam"}).status_code == 404
    assert client.post("/@alice/report/", {"reason": "spam"}).status_code == 404
    assert not Report.objects.exists()


def test_moderators_see_every_post_s_tags_and_the_trending_list(client, moderator, alice):
    from posts.services import create_post
    from posts.tags import compute_trending

    hidden = create_post(author=alice, text="#secret plans")
    moderation.hide_post(moderator=moderator, post=hidden)
    compute_trending()

    client.force_login(alice)
    assert client.get("/admin/posts/trendingtag/").status_code in (302, 403)
    client.force_login(moderator)
    post_page = client.get(f"/admin/posts/post/{hidden.pk}/change/").content.decode()
    assert "#secret" in post_page  # a hidden post's tags too
    assert client.get("/admin/posts/trendingtag/").status_code == 200
