"""Hostile input at search, the tag timeline, favourites, filters and WebFinger: the answer
is JSON of the declared shape, or a JSON error, never a 5xx; and a page costs the same
number of queries however many statuses it holds."""

from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from pydantic import TypeAdapter

from api import hashtags, schemas
from api.personal import FilterV2
from api.search import Results
from posts.services import create_post, like
from tests.api.hostile import FUZZ, nasty
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NASTY = nasty("9" * 41, "#", "##", "#话题#", "@")
STATUSES = TypeAdapter(list[schemas.Status])


@pytest.fixture
def token(make_token):
    reader = UserFactory(username="fuzzer")
    create_post(author=UserFactory(username="writer"), text="#roses 今天 gardening")
    return make_token(reader)


def shaped(response, adapter=None):
    assert response.status_code < 500, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    if response.status_code == 200 and adapter is not None:
        adapter.validate_python(response.json())
    elif response.status_code != 200:
        assert response.json()["error"]


@FUZZ
@given(q=NASTY, kind=NASTY, value=NASTY)
def test_search_of_anything(api, token, q, kind, value):
    results = TypeAdapter(Results)
    shaped(api.get("/api/v2/search", token=token, q=q), results)
    shaped(api.get("/api/v2/search", token=token, q=q, type=kind, limit=value), results)
    shaped(api.get("/api/v2/search", q=q, max_id=value, offset=value), results)


@FUZZ
@given(name=NASTY, value=NASTY)
def test_tags_and_favourites_of_anything(api, token, name, value):
    quoted = quote(name, safe="") or "x"
    shaped(api.get(f"/api/v1/timelines/tag/{quoted}", token=token, max_id=value), STATUSES)
    shaped(api.get(f"/api/v1/tags/{quoted}"), TypeAdapter(hashtags.Tag))
    shaped(api.get("/api/v1/timelines/tag/roses", **{"any[]": name, "none[]": value}), STATUSES)
    for field in ("max_id", "since_id", "min_id"):
        shaped(api.get("/api/v1/favourites", token=token, **{field: value}), STATUSES)
    shaped(api.get(f"/api/v2/filters/{quoted}", token=token), TypeAdapter(FilterV2))
    shaped(api.post("/api/v2/filters", {"title": name, "expires_in": value}, token=token))
    shaped(api.get("/api/v1/trends/tags", limit=value, offset=value))


@FUZZ
@given(resource=NASTY)
def test_webfinger_of_anything(client, resource):
    answer = client.get("/.well-known/webfinger", {"resource": resource})
    assert answer.status_code in (200, 404)
    assert answer.json()


def queries(call) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert call().status_code == 200
    return len(captured)


def test_a_page_costs_the_same_queries_for_two_statuses_or_eight(api, make_token):
    reader, writer = UserFactory(username="reader"), UserFactory(username="writer")
    token = make_token(reader)
    paths = [
        ("/api/v2/search", {"q": "gardening", "type": "statuses"}),
        ("/api/v1/timelines/tag/roses", {}),
        ("/api/v1/favourites", {}),
    ]

    def write(count):
        for n in range(count):
            post = create_post(author=writer, text=f"#roses gardening @reader {n}")
            like(user=reader, post=post)

    def costs():
        return [queries(lambda p=p, q=q: api.get(p, token=token, **q)) for p, q in paths]

    write(2)
    costs()  # the first call records the reader active, once an interval
    few = costs()
    write(6)
    assert costs() == few
