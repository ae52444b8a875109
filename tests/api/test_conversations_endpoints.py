"""/api/v1/conversations: the site's private messages in Mastodon's shapes, paged, read
and deleted, and only ever the participants'."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from feed_project.pagination import Cursor
from posts import ids
from posts.services import create_post, delete_post
from relations.services import block
from tests.factories import UserFactory
from timelines.conversations.selectors import conversations_page
from timelines.conversations.services import key_of
from timelines.models import Conversation, ConversationMessage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(db):
    return [UserFactory(username=name) for name in ("ann", "ben", "cat", "dan")]


def unread(user: User) -> int:
    user.refresh_from_db()
    return user.unread_conversations


def status_id(post) -> str:
    return ids.decimal_of_key(post.timeline_key)


def link_of(answer, rel: str) -> str | None:
    found = re.search(rf'<([^>]+)>; rel="{rel}"', answer.get("Link", ""))
    return found.group(1) if found else None


def test_the_list_is_the_sites_newest_message_first(api, people, make_token):
    ann, ben, cat, _ = people
    first = create_post(author=ann, text="@ben @cat lunch?", visibility="direct")
    second = create_post(author=cat, text="@ben just us", visibility="direct")
    create_post(author=ben, text="a public post, no message")
    token = make_token(ben)
    answer = api.get("/api/v1/conversations", token=token)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [c["id"] for c in body] == [key_of([ben.pk, cat.pk]), key_of([ann.pk, ben.pk, cat.pk])]
    assert [c["last_status"]["id"] for c in body] == [status_id(second), status_id(first)]
    assert [c["unread"] for c in body] == [True, True]
    assert [[a["username"] for a in c["accounts"]] for c in body] == [["cat"], ["ann", "cat"]]
    assert body[0]["last_status"]["visibility"] == "direct"
    site = conversations_page(user=ben, cursor=Cursor())
    assert [item.conversation.key for item in site.items] == [c["id"] for c in body]


def test_paging_with_link_headers(api, people, make_token):
    ann, ben, cat, dan = people
    posts = [
        create_post(author=ann, text=f"@{other.username} hi", visibility="direct")
        for other in (ben, cat, dan)
    ]
    token = make_token(ann)
    first = api.get("/api/v1/conversations", token=token, limit=2)
    assert [c["last_status"]["id"] for c in first.json()] == [
        status_id(posts[2]),
        status_id(posts[1]),
    ]
    nxt = link_of(first, "next")
    assert f"max_id={status_id(posts[1])}" in nxt
    rest = api.get(nxt.replace("http://testserver", ""), token=token).json()
    assert [c["last_status"]["id"] for c in rest] == [status_id(posts[0])]
    up = api.get("/api/v1/conversations", token=token, min_id=status_id(posts[0])).json()
    assert [c["last_status"]["id"] for c in up] == [status_id(posts[2]), status_id(posts[1])]
    assert api.get("/api/v1/conversations", token=token, max_id="x").status_code == 422


def test_a_page_costs_the_same_queries_whatever_it_holds(api, people, make_token):
    ann, dan = people[0], people[3]
    token = make_token(ann)
    create_post(author=ann, text="@ben one", visibility="direct")
    api.get("/api/v1/conversations", token=token)

    def cost():
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/api/v1/conversations", token=token).status_code == 200
        return len(queries)

    before = cost()
    create_post(author=ann, text="@cat two", visibility="direct")
    create_post(author=dan, text="@ann @cat three", visibility="direct")
    assert cost() == before


def test_read_marks_it_read_on_the_site_too(api, people, make_token):
    ann, ben, _, _ = people
    create_post(author=ann, text="@ben are you there?", visibility="direct")
    key = key_of([ann.pk, ben.pk])
    token = make_token(ben)
    assert unread(ben) == 1
    answer = api.post(f"/api/v1/conversations/{key}/read", token=token)
    assert answer.status_code == 200, answer.content
    assert answer.json()["unread"] is False and answer.json()["id"] == key
    assert unread(ben) == 0
    assert not Conversation.objects.get(user_id=ben.pk, key=key).unread
    again = api.post(f"/api/v1/conversations/{key}/read", token=token)
    assert again.status_code == 200 and unread(ben) == 0


def test_delete_takes_it_off_ones_own_list_only(api, people, make_token):
    ann, ben, _, _ = people
    create_post(author=ann, text="@ben secret", visibility="direct")
    key = key_of([ann.pk, ben.pk])
    token = make_token(ben)
    assert unread(ben) == 1
    answer = api.delete(f"/api/v1/conversations/{key}", token=token)
    assert answer.status_code == 200 and answer.json() == {}
    assert api.get("/api/v1/conversations", token=token).json() == []
    assert unread(ben) == 0
    assert not ConversationMessage.objects.filter(user_id=ben.pk).exists()
    assert [c["id"] for c in api.get("/api/v1/conversations", token=make_token(ann)).json()] == [
        key
    ]
    assert api.delete(f"/api/v1/conversations/{key}", token=token).status_code == 404
    # A new message starts it again.
    create_post(author=ann, text="@ben still there?", visibility="direct")
    assert [c["id"] for c in api.get("/api/v1/conversations", token=token).json()] == [key]


def test_nobody_else_reads_deletes_or_sees_a_conversation(api, people, make_token):
    ann, ben, cat, _ = people
    create_post(author=ann, text="@ben between us", visibility="direct")
    key = key_of([ann.pk, ben.pk])
    outsider = make_token(cat)
    assert api.get("/api/v1/conversations", token=outsider).json() == []
    for wrong in (key, "1.2", "abc", "..", "9" * 40):
        assert api.post(f"/api/v1/conversations/{wrong}/read", token=outsider).status_code == 404
        assert api.delete(f"/api/v1/conversations/{wrong}", token=outsider).status_code == 404
    assert Conversation.objects.filter(key=key).count() == 2


def test_a_blocked_persons_message_and_a_deleted_one_are_not_shown(api, people, make_token):
    ann, ben, _, _ = people
    post = create_post(author=ann, text="@ben hello", visibility="direct")
    token = make_token(ben)
    block(user=ben, target=ann)
    shown = api.get("/api/v1/conversations", token=token).json()
    assert all(c["last_status"] is None for c in shown)
    delete_post(post=post)
    shown = api.get("/api/v1/conversations", token=token).json()
    assert all(c["last_status"] is None for c in shown)


def test_auth_and_scopes(api, people, make_token):
    ann = people[0]
    assert api.get("/api/v1/conversations").status_code == 401
    reader = make_token(ann, "read")
    assert api.get("/api/v1/conversations", token=reader).status_code == 200
    assert api.delete("/api/v1/conversations/1.2", token=reader).status_code == 403
    assert api.post("/api/v1/conversations/1.2/read", token=reader).status_code == 403
    writer = make_token(ann, "write:conversations")
    assert api.get("/api/v1/conversations", token=writer).status_code == 403
    assert api.delete("/api/v1/conversations/1.2", token=writer).status_code == 404
