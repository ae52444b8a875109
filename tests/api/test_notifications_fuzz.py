"""Hostile input at the notifications, conversations and markers endpoints: whatever a
client sends, the answer is JSON and never a 5xx."""

from urllib.parse import quote

import pytest
from hypothesis import given

from tests.api.hostile import FUZZ, json_and_not_5xx, nasty
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NASTY = nasty(
    "favourite-1-9999999", "favourite--1", "follow-99999999999", "ungrouped-", "1.2", ".."
)


@pytest.fixture
def token(make_token):
    return make_token(UserFactory(username="fuzzer"))


@FUZZ
@given(value=NASTY, limit=NASTY)
def test_paths_and_parameters_of_anything(api, token, value, limit):
    quoted = quote(value, safe="")
    for path in (
        f"/api/v1/notifications/{quoted}",
        f"/api/v2/notifications/{quoted}",
        f"/api/v2/notifications/{quoted}/accounts",
    ):
        json_and_not_5xx(api.get(path, token=token))
    for path in (
        f"/api/v1/notifications/{quoted}/dismiss",
        f"/api/v2/notifications/{quoted}/dismiss",
        f"/api/v1/conversations/{quoted}/read",
    ):
        json_and_not_5xx(api.post(path, token=token))
    json_and_not_5xx(api.delete(f"/api/v1/conversations/{quoted}", token=token))
    for list_path in ("/api/v1/notifications", "/api/v2/notifications", "/api/v1/conversations"):
        for name in ("max_id", "since_id", "min_id"):
            json_and_not_5xx(api.get(list_path, token=token, limit=limit, **{name: value}))
    json_and_not_5xx(
        api.get(
            "/api/v1/notifications",
            token=token,
            account_id=value,
            **{"types[]": [value], "exclude_types[]": [value]},
        )
    )
    json_and_not_5xx(api.get("/api/v1/notifications/unread_count", token=token, limit=limit))
    json_and_not_5xx(api.get("/api/v2/notifications/unread_count", token=token, limit=limit))
    json_and_not_5xx(api.get("/api/v1/markers", token=token, **{"timeline[]": [value]}))


@FUZZ
@given(home=NASTY, notes=NASTY)
def test_markers_of_anything(api, token, home, notes):
    body = {"home": {"last_read_id": home}, "notifications": {"last_read_id": notes}}
    json_and_not_5xx(api.post("/api/v1/markers", body, token=token))
    form = {"home[last_read_id]": home, "notifications[last_read_id]": notes}
    json_and_not_5xx(api.post("/api/v1/markers", form, token=token, json=False))
    json_and_not_5xx(api.post("/api/v1/markers", {"home": home}, token=token))
