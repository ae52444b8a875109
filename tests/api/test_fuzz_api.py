"""Hostile input at the API: whatever a client sends, the answer is JSON and never a 5xx."""

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
NASTY = st.one_of(
    st.sampled_from(
        ["", "\x00", "-1", "0", "9" * 40, "1e9", "<script>", "' OR 1=1 --", "١٢٣", "ZZZZ"]
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
