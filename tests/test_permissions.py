"""One user cannot delete, edit or act for another, whatever fields they POST."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from posts.models import Like, Post, Report
from posts.services import create_post
from relations.models import Followee, Follower
from tests.factories import set_email

pytestmark = pytest.mark.django_db

# Fields a forged form might add to make the server act for someone else.
IMPERSONATION = {
    "user": None,
    "user_id": None,
    "author": None,
    "author_id": None,
    "follower": None,
    "follower_id": None,
    "reporter": None,
    "reporter_id": None,
    "username": "bob",
    "as": "bob",
}


def _as_bob(bob: User) -> dict[str, str]:
    return {k: (v if v is not None else str(bob.pk)) for k, v in IMPERSONATION.items()}


def _url(name: str, *args: str) -> str:
    return reverse(name, args=args)


def test_a_user_cannot_delete_someone_elses_post(alice_client, bob):
    post = create_post(author=bob, text="bob's words")
    live = Post.objects.filter(deleted_at__isnull=True).count()
    response = alice_client.post(reverse("posts:delete", args=[post.pk]), _as_bob(bob))
    assert response.status_code == 403
    post.refresh_from_db()
    assert post.deleted_at is None
    assert post.text == "bob's words"
    assert Post.objects.filter(deleted_at__isnull=True).count() == live
    bob.refresh_from_db()
    assert bob.posts_count == 1


def test_the_author_can_delete_their_own_post(alice, alice_client):
    post = create_post(author=alice, text="mine")
    response = alice_client.post(reverse("posts:delete", args=[post.pk]))
    assert response.status_code == 302
    post.refresh_from_db()
    assert post.deleted_at is not None


def test_a_post_is_always_written_as_the_signed_in_user(alice, alice_client, bob):
    data = {"text": "who wrote this?", **_as_bob(bob)}
    assert alice_client.post(reverse("posts:new"), data).status_code == 302
    post = Post.objects.get(text="who wrote this?")
    assert post.author_id == alice.pk
    bob.refresh_from_db()
    assert bob.posts_count == 0


def test_editing_the_profile_edits_only_your_own(alice, alice_client, bob):
    data = {"display_name": "Alice A.", "bio": "hi", **_as_bob(bob), "pk": str(bob.pk)}
    response = alice_client.post(reverse("accounts:edit_profile"), data)
    assert response.status_code == 302
    alice.refresh_from_db()
    bob.refresh_from_db()
    assert (alice.username, alice.display_name, alice.bio) == ("alice", "Alice A.", "hi")
    assert (bob.username, bob.display_name, bob.bio) == ("bob", "Bob", "")


def test_the_profile_form_cannot_change_username_password_or_staff_flags(alice, alice_client):
    password = alice.password
    data = {
        "display_name": "A",
        "bio": "",
        "username": "root",
        "password": "x",
        "is_staff": "on",
        "is_superuser": "on",
        "followers_count": "999999",
    }
    alice_client.post(reverse("accounts:edit_profile"), data)
    alice.refresh_from_db()
    assert alice.username == "alice"
    assert alice.password == password
    assert not alice.is_staff
    assert not alice.is_superuser
    assert alice.followers_count == 0


def test_follow_acts_only_as_the_signed_in_user(alice, alice_client, bob, carol):
    # bob already follows alice (the fixture); alice asks to follow carol "as bob".
    before = Follower.objects.count()
    response = alice_client.post(reverse("relations:follow", args=["carol"]), _as_bob(bob))
    assert response.status_code == 302
    assert Follower.objects.count() == before + 1
    assert Follower.objects.filter(user=carol, follower=alice).exists()
    assert not Follower.objects.filter(user=carol, follower=bob).exists()
    assert Followee.objects.filter(user=alice, followee=carol).exists()


def test_unfollow_acts_only_as_the_signed_in_user(alice, bob, carol):
    # bob follows alice; carol, who follows nobody, asks to unfollow alice "as bob".
    client = Client()
    client.force_login(carol)
    response = client.post(reverse("relations:unfollow", args=["alice"]), _as_bob(bob))
    assert response.status_code == 302
    assert Follower.objects.filter(user=alice, follower=bob).exists()
    assert Followee.objects.filter(user=bob, followee=alice).exists()
    bob.refresh_from_db()
    assert bob.following_count == 1


def test_like_is_written_as_the_signed_in_user_only(alice, alice_client, bob, carol):
    post = create_post(author=carol, text="likeable")
    url = _url("posts:like", post.pk)
    response = alice_client.post(url, _as_bob(bob))
    assert response.status_code == 302
    assert list(Like.objects.filter(post=post).values_list("user_id", flat=True)) == [alice.pk]


def test_unlike_removes_only_your_own_like(alice, alice_client, bob, carol):
    post = create_post(author=carol, text="likeable")
    like_url = _url("posts:like", post.pk)
    unlike_url = _url("posts:unlike", post.pk)
    bob_client = Client()
    bob_client.force_login(bob)
    bob_client.post(like_url)
    alice_client.post(unlike_url, _as_bob(bob))
    assert Like.objects.filter(post=post, user=bob).exists()


def test_repost_is_written_as_the_signed_in_user_only(alice, alice_client, bob, carol):
    post = create_post(author=carol, text="worth sharing")
    url = _url("posts:repost", post.pk)
    response = alice_client.post(url, _as_bob(bob))
    assert response.status_code == 302
    reposts = Post.objects.filter(repost_of=post, deleted_at__isnull=True)
    assert list(reposts.values_list("author_id", flat=True)) == [alice.pk]


def test_unrepost_removes_only_your_own_repost(alice, alice_client, bob, carol):
    post = create_post(author=carol, text="worth sharing")
    repost_url = _url("posts:repost", post.pk)
    unrepost_url = _url("posts:unrepost", post.pk)
    bob_client = Client()
    bob_client.force_login(bob)
    bob_client.post(repost_url)
    alice_client.post(unrepost_url, _as_bob(bob))
    reposts = Post.objects.filter(repost_of=post, deleted_at__isnull=True)
    assert list(reposts.values_list("author_id", flat=True)) == [bob.pk]


def test_a_report_is_filed_as_the_signed_in_user_only(alice, alice_client, bob, carol):
    post = create_post(author=carol, text="reportable")
    url = _url("posts:report", post.pk)
    alice_client.post(url, {"reason": "spam", **_as_bob(bob)})
    assert set(Report.objects.values_list("reporter_id", flat=True)) <= {alice.pk}
    assert not Report.objects.filter(reporter=bob).exists()


def test_a_plain_user_cannot_reach_the_admin(alice_client):
    for path in ("/admin/", "/admin/posts/post/", "/admin/accounts/user/"):
        response = alice_client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")


# --- Accounts: sessions, two-factor, e-mail, invites -------------------------------------


def test_a_user_cannot_end_someone_elses_session(alice_client, bob):
    from accounts import sessions

    bob_client = Client()
    bob_client.force_login(bob)
    bob_session = sessions.digest(bob_client.session.session_key)
    response = alice_client.post(
        reverse("account_settings:end_session"), {"session": bob_session, **_as_bob(bob)}
    )
    assert response.status_code == 302
    assert bob_client.get("/").context["user"] == bob
    alice_client.post(reverse("account_settings:end_other_sessions"), _as_bob(bob))
    assert bob_client.get("/").context["user"] == bob


def test_two_factor_changes_act_only_on_your_own(alice, alice_client, bob):
    import pyotp

    from accounts import twofactor
    from tests.conftest import PASSWORD

    setup = twofactor.start_setup(user=bob)
    twofactor.confirm_setup(user=bob, code=pyotp.TOTP(setup.secret).now())
    data = {"password": PASSWORD, **_as_bob(bob)}
    alice_client.post(reverse("account_settings:2fa_disable"), data)
    alice_client.post(reverse("account_settings:2fa_recovery_codes"), data)
    assert twofactor.is_enabled(bob)
    assert twofactor.recovery_codes_left(bob) == 10


def test_an_email_change_is_written_for_the_signed_in_user_only(alice, alice_client, bob):
    from tests.conftest import PASSWORD

    data = {"email": "new@example.com", "password": PASSWORD, **_as_bob(bob)}
    assert alice_client.post(reverse("accounts:change_email"), data).status_code == 302
    assert User.objects.get(pk=alice.pk).unconfirmed_email == "new@example.com"
    assert User.objects.get(pk=bob.pk).unconfirmed_email == ""


def test_a_verification_link_proves_only_the_account_it_was_sent_for(alice, bob):
    from accounts.tokens import verification_token

    set_email(bob, "bob@example.com")
    token = verification_token(user_id=alice.pk, address="bob@example.com")
    Client().post(reverse("accounts:verify_email", args=[token]))
    assert User.objects.get(pk=bob.pk).email_verified_at is None
    assert User.objects.get(pk=alice.pk).email == ""


def test_invites_are_made_as_the_signed_in_user(alice, alice_client, bob):
    from django.contrib.auth.models import Permission

    from accounts.models import Invite

    alice.user_permissions.add(Permission.objects.get(codename="add_invite"))
    data = {"days": "7", "max_uses": "1", **_as_bob(bob)}
    assert alice_client.post(reverse("account_settings:invites"), data).status_code == 302
    assert list(Invite.objects.values_list("user_id", flat=True)) == [alice.pk]


def test_deleting_an_account_deletes_only_your_own(alice, alice_client, bob):
    from tests.conftest import PASSWORD

    data = {"password": PASSWORD, "code": "", **_as_bob(bob)}
    response = alice_client.post(reverse("account_settings:delete"), data)
    assert response.status_code == 302
    alice.refresh_from_db()
    bob.refresh_from_db()
    assert alice.deletion_due_at is not None
    assert bob.deletion_due_at is None
    assert Client().get(f"/@{bob.username}/").status_code == 200


# --- Data export and the import of follows -----------------------------------------------


def test_an_export_is_made_of_the_signed_in_users_data_only(
    alice, alice_client, bob, django_capture_on_commit_callbacks
):
    import io
    import json
    import re
    import zipfile

    from accounts.models import Export

    create_post(author=bob, text="bob's words")
    create_post(author=alice, text="alice's words")
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("account_settings:export"), _as_bob(bob))
    assert response.status_code == 302
    assert list(Export.objects.values_list("user_id", flat=True)) == [alice.pk]
    page = alice_client.get(reverse("account_settings:export")).content.decode()
    link = re.search(r'href="(/settings/export/download/[^"]+/)"', page).group(1)
    download = alice_client.get(link, _as_bob(bob))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert json.loads(archive.read("profile.json"))["username"] == "alice"
    assert [p["text"] for p in json.loads(archive.read("posts.json"))] == ["alice's words"]
    # Bob, signed in, cannot use alice's link.
    bob_client = Client()
    bob_client.force_login(bob)
    assert bob_client.get(link).status_code == 404


def test_an_import_follows_as_the_signed_in_user_only(
    alice, alice_client, bob, carol, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("following.csv", b"username\ncarol\n", "text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(
            reverse("relations:import_follows"), {"file": upload, **_as_bob(bob)}
        )
    assert response.status_code == 302
    assert Followee.objects.filter(user=alice, followee=carol).exists()
    assert not Followee.objects.filter(user=bob, followee=carol).exists()
    bob.refresh_from_db()
    assert bob.following_count == 1  # alice only, from the fixture
