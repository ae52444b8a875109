"""Hostile input at the notifications, conversations and markers endpoints: whatever a
client sends, the answer is JSON and never a 5xx."""

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
NASTY = st.one_of(
    st.sampled_from(
        [
            "",
            "\x00",
            "-1",
            "0",
            "9" * 40,
            "favourite-1-9999999",
            "favourite--1",
            "follow-99999999999",
            "ungrouped-",
            "1.2",
            "..",
            "١٢٣",
        ]
    ),
    st.text(max_size=60),
    st.integers(-(2**70), 2**90).map(str),
)


@pytest.fixture
def token(make_token):
    return make_token(UserFactory(username="fuzzer"))


def json_and_not_5xx(response):
    assert response.status_code < 500, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response.content[:300]


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
