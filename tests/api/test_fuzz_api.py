"""Hostile input at the API: whatever a client sends, the answer is JSON and never a 5xx."""

from urllib.parse import quote

import pytest
from hypothesis import given

from tests.api.hostile import FUZZ, json_and_not_5xx, nasty
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NASTY = nasty("ZZZZ")


@pytest.fixture
def token(make_token):
    return make_token(UserFactory(username="fuzzer"))


@FUZZ
@given(status=NASTY, visibility=NASTY, reply_to=NASTY, spoiler=NASTY)
def test_posting_anything(api, token, status, visibility, reply_to, spoiler):
    body = {
        "status": status,
        "visibility": visibility,
        "in_reply_to_id": reply_to,
        "spoiler_text": spoiler,
    }
    json_and_not_5xx(api.post("/api/v1/statuses", body, token=token))
    json_and_not_5xx(api.post("/api/v1/statuses", body, token=token, json=False))


@FUZZ
@given(value=NASTY, limit=NASTY)
def test_ids_and_paging_of_anything(api, token, value, limit):
    quoted = quote(value, safe="")
    for path in (f"/api/v1/statuses/{quoted}", f"/api/v1/accounts/{quoted}"):
        json_and_not_5xx(api.get(path, token=token))
    for name in ("max_id", "since_id", "min_id"):
        json_and_not_5xx(
            api.get("/api/v1/timelines/home", token=token, limit=limit, **{name: value})
        )
    json_and_not_5xx(api.get("/api/v1/timelines/public", max_id=value, min_id=value))
