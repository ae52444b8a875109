"""Private messages: conversations built from direct posts, pushed to each participant."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from feed_project.refusals import NotFound
from posts.services import create_post
from relations.services import block
from tests.factories import UserFactory
from timelines.conversations.selectors import conversation_of
from timelines.models import Conversation, ConversationMessage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(db):
    return [UserFactory(username=name) for name in ("ann", "ben", "cat", "dan")]


def unread(user: User) -> int:
    user.refresh_from_db()
    return user.unread_conversations


def client_of(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_direct_post_to_two_people_is_one_conversation_in_three_copies(people):
    ann, ben, cat, dan = people
    post = create_post(author=ann, text="@ben @cat lunch?", visibility="direct")

    key = ".".join(str(pk) for pk in sorted([ann.pk, ben.pk, cat.pk]))
    rows = Conversation.objects.order_by("user_id")
    assert [row.user_id for row in rows] == sorted([ann.pk, ben.pk, cat.pk])
    assert {row.key for row in rows} == {key}
    assert ConversationMessage.objects.filter(timeline_key=post.timeline_key).count() == 3
    assert (unread(ann), unread(ben), unread(cat), unread(dan)) == (0, 1, 1, 0)


def test_send_read_and_answer_through_the_pages(people):
    ann, ben, _, dan = people
    create_post(author=ann, text="@ben are you there?", visibility="direct")
    ben_client = client_of(ben)
    home = ben_client.get("/").content.decode()
    assert 'aria-label="1 unread">1</span>' in home

    listing = ben_client.get("/messages/").content.decode()
    key = re.search(r'data-conversation="([0-9.]+)"', listing).group(1)
    assert "are you there?" in listing
    page = ben_client.get(f"/messages/{key}/").content.decode()
    assert "are you there?" in page
    assert unread(ben) == 0
    reply_to = re.search(r'name="in_reply_to" value="([0-9A-Z]+)"', page).group(1)

    answer = {"text": "yes!", "in_reply_to": reply_to, "visibility": "direct"}
    response = ben_client.post("/posts/new/", {**answer, "next": f"/messages/{key}/"})

    assert response.status_code == 302
    assert response["Location"] == f"/messages/{key}/"
    assert unread(ann) == 1
    ann_page = client_of(ann).get(f"/messages/{key}/").content.decode()
    assert ann_page.index("are you there?") < ann_page.index("yes!")  # oldest first
    assert client_of(dan).get(f"/messages/{key}/").status_code == 404
    assert "yes!" not in client_of(dan).get("/messages/").content.decode()


def test_a_block_keeps_the_blocked_person_out_of_the_conversation(people):
    ann, ben, cat, _ = people
    block(user=cat, target=ann)

    create_post(author=ann, text="@ben @cat hello both", visibility="direct")

    assert not Conversation.objects.filter(user_id=cat.pk).exists()
    assert unread(cat) == 0
    assert Conversation.objects.filter(user_id=ben.pk).count() == 1


def test_the_conversation_list_costs_the_same_queries_however_long(people):
    ann, ben, cat, dan = people
    client = client_of(ann)
    client.get("/messages/")
    counts = []
    for others in ([ben], [cat, dan]):
        names = " ".join(f"@{p.username}" for p in others)
        create_post(author=ann, text=f"{names} hi", visibility="direct")
        with CaptureQueriesContext(connection) as queries:
            client.get("/messages/")
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_a_malformed_conversation_key_is_a_404(people):
    client = client_of(people[0])
    for key in ("x", "1", "1..2", "1.2" + ".3" * 20):
        assert client.get(f"/messages/{key}/").status_code == 404


def test_a_conversation_one_is_not_in_or_a_malformed_key_is_not_found(people):
    ann, ben, _, dan = people
    create_post(author=ann, text="@ben lunch?", visibility="direct")
    key = ".".join(str(pk) for pk in sorted([ann.pk, ben.pk]))
    assert conversation_of(user=ben, key=key).key == key
    for user, wrong in ((dan, key), (ben, "x"), (ben, f"{key}.{dan.pk}")):
        with pytest.raises(NotFound) as caught:
            conversation_of(user=user, key=wrong)
        assert caught.value.message == "No such conversation."
