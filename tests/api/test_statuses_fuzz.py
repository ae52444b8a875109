"""Hostile input at the status actions and lists: whatever a client sends, the answer is
JSON, never a 5xx, and a success is the shape the OpenAPI document declares."""

from urllib.parse import quote

import pytest
from hypothesis import given
from pydantic import TypeAdapter

from api import schemas, status_actions
from posts import ids
from posts.services import create_post, like, repost
from tests.api.hostile import FUZZ, json_and_not_5xx, nasty
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NASTY = nasty("ZZZZ")
SHAPES = {
    "context": TypeAdapter(status_actions.Context),
    "history": TypeAdapter(list[status_actions.StatusEdit]),
    "source": TypeAdapter(status_actions.StatusSource),
    "favourited_by": TypeAdapter(list[schemas.Account]),
    "reblogged_by": TypeAdapter(list[schemas.Account]),
}
STATUS = TypeAdapter(schemas.Status)


@pytest.fixture
def world(make_token):
    """A post liked and reposted by a few, quoted and replied to, and a token."""
    author, fan = UserFactory(), UserFactory()
    post = create_post(author=author, text="fuzzed")
    like(user=fan, post=post)
    repost(user=fan, post=post)
    create_post(author=fan, text="a quote", quote_of=post)
    create_post(author=fan, text="a reply", in_reply_to=post)
    return ids.decimal_of_key(post.timeline_key), make_token(UserFactory())


@FUZZ
@given(value=NASTY, limit=NASTY)
def test_lists_of_anything(api, world, value, limit):
    status_id, token = world
    for what, shape in SHAPES.items():
        for path in (
            f"/api/v1/statuses/{quote(value, safe='')}/{what}",
            f"/api/v1/statuses/{status_id}/{what}",
        ):
            for name in ("max_id", "since_id", "min_id"):
                answer = json_and_not_5xx(api.get(path, token=token, limit=limit, **{name: value}))
                if answer.status_code == 200:
                    shape.validate_python(answer.json())


@FUZZ
@given(value=NASTY, visibility=NASTY)
def test_actions_on_anything(api, world, value, visibility):
    status_id, token = world
    for target in (quote(value, safe=""), status_id):
        for action in ("favourite", "unfavourite", "reblog", "unreblog"):
            answer = json_and_not_5xx(
                api.post(
                    f"/api/v1/statuses/{target}/{action}", {"visibility": visibility}, token=token
                )
            )
            if answer.status_code == 200:
                STATUS.validate_python(answer.json())
