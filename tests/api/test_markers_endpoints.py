"""/api/v1/markers: read positions, their versions under concurrent writes, and the
notifications marker as the site's read state."""

import threading

import pytest
from django.db import connection

from accounts.models import User
from posts import ids
from posts.services import create_post
from tests.factories import UserFactory
from timelines.markers import services
from timelines.markers.models import Marker
from timelines.notifications import services as notifications
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


def status_id(post) -> str:
    return ids.decimal_of_key(post.timeline_key)


def test_set_and_get_home_and_notifications(api, alice, token):
    post = create_post(author=alice, text="read up to here")
    assert api.get("/api/v1/markers", token=token, **{"timeline[]": ["home"]}).json() == {}
    answer = api.post("/api/v1/markers", {"home": {"last_read_id": status_id(post)}}, token=token)
    assert answer.status_code == 200, answer.content
    home = answer.json()["home"]
    assert home["last_read_id"] == status_id(post) and home["version"] == 1
    assert home["updated_at"].endswith("Z")
    # A form, as some apps send it.
    again = api.post(
        "/api/v1/markers",
        {"home[last_read_id]": status_id(post), "notifications[last_read_id]": "7"},
        token=token,
        json=False,
    )
    assert again.status_code == 200, again.content
    assert again.json()["home"]["version"] == 2
    assert again.json()["notifications"] == {
        "last_read_id": "7",
        "version": 1,
        "updated_at": again.json()["notifications"]["updated_at"],
    }
    both = api.get(
        "/api/v1/markers", token=token, **{"timeline[]": ["home", "notifications", "nope"]}
    )
    assert both.json() == again.json()
    only = api.get("/api/v1/markers", token=token, timeline="notifications").json()
    assert list(only) == ["notifications"]


def test_markers_are_each_persons_own(api, alice, token, make_token):
    api.post("/api/v1/markers", {"home": {"last_read_id": "12345"}}, token=token)
    carol = UserFactory(username="carol")
    theirs = api.get("/api/v1/markers", token=make_token(carol), **{"timeline[]": ["home"]})
    assert theirs.json() == {}


def test_bad_input_is_a_422_and_no_token_a_401(api, alice, token, make_token):
    for body in (
        {"home": {"last_read_id": "abc"}},
        {"notifications": {"last_read_id": "-3"}},
        {"notifications": {"last_read_id": "9" * 40}},
        {"home": "x"},
        {"home": {}},
    ):
        answer = api.post("/api/v1/markers", body, token=token)
        assert answer.status_code == 422, (body, answer.content)
        assert "error" in answer.json()
    assert Marker.objects.count() == 0
    assert api.get("/api/v1/markers").status_code == 401
    assert api.post("/api/v1/markers", {"home": {"last_read_id": "1"}}).status_code == 401
    reader = make_token(alice, "read")
    assert (
        api.post("/api/v1/markers", {"home": {"last_read_id": "1"}}, token=reader).status_code
        == 403
    )


def test_the_notifications_marker_marks_the_sites_notifications_read(api, alice, token):
    people = [UserFactory(username=f"fan{n}") for n in range(3)]
    for person in people:
        notifications.notify(recipient_id=alice.pk, kind="follow", actor_id=person.pk)
    notes = list(Notification.objects.filter(recipient_id=alice.pk).order_by("id"))
    assert User.objects.get(pk=alice.pk).unread_notifications == 3
    api.post("/api/v1/markers", {"notifications": {"last_read_id": str(notes[1].pk)}}, token=token)
    assert User.objects.get(pk=alice.pk).unread_notifications == 1
    assert [n.read_at is not None for n in Notification.objects.order_by("id")] == [
        True,
        True,
        False,
    ]
    # Going back marks nothing unread again.
    api.post("/api/v1/markers", {"notifications": {"last_read_id": str(notes[0].pk)}}, token=token)
    assert User.objects.get(pk=alice.pk).unread_notifications == 1
    assert api.get("/api/v1/notifications/unread_count", token=token).json() == {"count": 1}


@pytest.mark.django_db(transaction=True)
def test_concurrent_writes_each_count(alice):
    """Eight writers at once: every write lands, and the version counts them all."""
    writers, errors = 8, []
    start = threading.Barrier(writers)

    def write(n: int) -> None:
        try:
            start.wait()
            services.set_markers(user=alice, positions={"home": str(1000 + n)})
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    marker = Marker.objects.get(user_id=alice.pk, timeline="home")
    assert marker.version == writers
    assert int(marker.last_read_id) in range(1000, 1000 + writers)
