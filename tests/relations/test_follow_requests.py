"""Locked accounts: a follow becomes a request the account accepts or rejects."""

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from feed_project.pagination import Cursor
from posts.services import create_post
from relations.models import Followee, Follower, FollowRequest
from relations.services import (
    accept_request,
    block,
    follow,
    is_requested,
    reject_request,
    unfollow,
)
from tests.factories import UserFactory
from timelines.home import home_feed
from timelines.home._models import InboxEntry
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def locked(db):
    return UserFactory(username="lena", locked=True, last_active_at=timezone.now())


@pytest.fixture
def asker(db):
    return UserFactory(username="ask", last_active_at=timezone.now())


def follows(follower: User, followee: User) -> bool:
    mirror = Follower.objects.filter(user=followee, follower=follower).exists()
    row = Followee.objects.filter(user=follower, followee=followee).exists()
    assert mirror == row
    return row


def test_following_a_locked_account_records_a_request_and_notifies_it(locked, asker):
    assert follow(follower=asker, followee=locked) is False
    assert follow(follower=asker, followee=locked) is False  # asked twice: one request

    assert not follows(asker, locked)
    assert is_requested(requester_id=asker.pk, user_id=locked.pk)
    assert FollowRequest.objects.count() == 1
    note = Notification.objects.get(recipient=locked)
    assert (note.kind, note.actor_id) == ("request", asker.pk)
    locked.refresh_from_db()
    assert locked.followers_count == 0


def test_accepting_makes_a_follow_backfills_the_inbox_and_tells_the_requester(locked, asker):
    private = create_post(author=locked, text="followers only", visibility="followers")
    home_feed(reader=asker, cursor=Cursor())  # asker's inbox is kept
    follow(follower=asker, followee=locked)
    assert home_feed(reader=asker, cursor=Cursor()).items == []

    assert accept_request(user=locked, requester=asker)

    assert follows(asker, locked)
    assert not is_requested(requester_id=asker.pk, user_id=locked.pk)
    keys = set(InboxEntry.objects.filter(reader_id=asker.pk).values_list("timeline_key", flat=True))
    assert private.timeline_key in keys  # backfilled like a follow
    assert [item.post.pk for item in home_feed(reader=asker, cursor=Cursor()).items] == [private.pk]
    assert Notification.objects.filter(recipient=asker, kind="accept", actor=locked).exists()
    assert Notification.objects.filter(recipient=locked, kind="follow", actor=asker).exists()
    assert not accept_request(user=locked, requester=asker)  # nothing pending any more


def test_rejecting_or_withdrawing_leaves_no_follow(locked, asker):
    follow(follower=asker, followee=locked)
    assert reject_request(user=locked, requester=asker)
    assert not follows(asker, locked)
    assert not reject_request(user=locked, requester=asker)

    follow(follower=asker, followee=locked)
    unfollow(follower=asker, followee=locked)  # withdrawn
    assert not FollowRequest.objects.exists()


def test_a_block_either_way_drops_the_request(locked, asker):
    follow(follower=asker, followee=locked)
    block(user=locked, target=asker)
    assert not FollowRequest.objects.exists()
    assert not accept_request(user=locked, requester=asker)


def test_unlocking_on_the_profile_page_accepts_every_pending_request(locked, asker):
    others = [UserFactory(username=f"other{n}") for n in range(2)]
    for person in (asker, *others):
        follow(follower=person, followee=locked)
    client = Client()
    client.force_login(locked)

    response = client.post("/accounts/profile/", {"display_name": "Lena", "bio": ""})

    assert response.status_code == 302
    locked.refresh_from_db()
    assert not locked.locked
    assert all(follows(person, locked) for person in (asker, *others))
    assert not FollowRequest.objects.exists()
    assert locked.followers_count == 3


def test_locking_on_the_profile_page_turns_follows_into_requests(asker):
    lena = UserFactory(username="lena2")
    client = Client()
    client.force_login(lena)
    assert 'name="locked"' in client.get("/accounts/profile/").content.decode()

    client.post("/accounts/profile/", {"display_name": "", "bio": "", "locked": "on"})

    lena.refresh_from_db()
    assert lena.locked
    follow(follower=asker, followee=lena)
    assert not follows(asker, lena)


def test_the_requests_page_lists_requests_and_accepts_and_rejects_them(locked, asker):
    other = UserFactory(username="other")
    follow(follower=asker, followee=locked)
    follow(follower=other, followee=locked)
    client = Client()
    client.force_login(locked)

    html = client.get("/follow-requests/").content.decode()
    assert 'data-requester="ask"' in html
    assert 'data-requester="other"' in html

    assert client.post("/follow-requests/ask/accept/").status_code == 302
    assert client.post("/follow-requests/other/reject/").status_code == 302
    assert follows(asker, locked)
    assert not follows(other, locked)
    assert "No pending requests." in client.get("/follow-requests/").content.decode()


def test_accepting_a_request_nobody_made_changes_nothing(locked, asker):
    client = Client()
    client.force_login(asker)  # asker tries to accept their own request on lena's behalf
    follow(follower=asker, followee=locked)

    assert client.post("/follow-requests/lena/accept/").status_code == 302
    assert client.post("/follow-requests/nobody/accept/").status_code == 404

    assert not follows(asker, locked)
    assert not follows(locked, asker)
    assert is_requested(requester_id=asker.pk, user_id=locked.pk)


def test_the_profile_of_a_locked_account_shows_a_request_button_and_then_requested(locked, asker):
    client = Client()
    client.force_login(asker)
    assert "Request to follow" in client.get("/@lena/").content.decode()

    client.post("/@lena/follow/")

    html = client.get("/@lena/").content.decode()
    assert "Requested" in html
    assert "Request to follow" not in html
