"""Every statement the notifications, conversations and markers endpoints send routes
by the shard key (tests/sharding_sql.py's check, as tests/test_sharding.py runs it on
the site's pages): on Citus each reads one user's shard, or the few it names."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from posts.services import create_post, like
from relations.services import follow
from tests.factories import UserFactory
from tests.sharding_sql import unpinned
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db(transaction=True)
# The token's look-up (api.auth), the same for every endpoint: not this area's.
AUTH = 'SELECT "api_accesstoken"'


def test_every_statement_routes_by_the_shard_key(api, make_token):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    follow(follower=bob, followee=alice)
    post = create_post(author=alice, text="hello")
    like(user=bob, post=post)
    create_post(author=bob, text="@alice a word", visibility="direct")
    token = make_token(alice)
    note = Notification.objects.filter(recipient_id=alice.pk).order_by("-id").first()
    group = api.get("/api/v2/notifications", token=token).json()["notification_groups"][0]
    key = api.get("/api/v1/conversations", token=token).json()[0]["id"]

    with CaptureQueriesContext(connection) as queries:
        assert api.get("/api/v1/notifications", token=token).status_code == 200
        assert api.get(f"/api/v1/notifications/{note.pk}", token=token).status_code == 200
        assert api.get("/api/v1/notifications/unread_count", token=token).status_code == 200
        assert api.get("/api/v2/notifications", token=token).status_code == 200
        assert api.get("/api/v2/notifications/unread_count", token=token).status_code == 200
        path = f"/api/v2/notifications/{group['group_key']}"
        assert api.get(path, token=token).status_code == 200
        assert api.get("/api/v1/conversations", token=token).status_code == 200
        assert api.post(f"/api/v1/conversations/{key}/read", token=token).status_code == 200
        marker = {"notifications": {"last_read_id": str(note.pk)}, "home": {"last_read_id": "1"}}
        assert api.post("/api/v1/markers", marker, token=token).status_code == 200
        assert api.get("/api/v1/markers", token=token, timeline="home").status_code == 200
        assert api.post(f"/api/v1/notifications/{note.pk}/dismiss", token=token).status_code == 200
        assert api.delete(f"/api/v1/conversations/{key}", token=token).status_code == 200
        assert api.post("/api/v1/notifications/clear", token=token).status_code == 200
    unrouted = [
        (query["sql"], unpinned(query["sql"]))
        for query in queries.captured_queries
        if unpinned(query["sql"]) and not query["sql"].startswith(AUTH)
    ]
    assert unrouted == []
