"""/api/v1/notifications and /api/v2/notifications through a Django test client: the
site's notifications (the page's selectors) in Mastodon's shapes, its filters, paging,
grouping, dismissing and clearing, the unread counts, and who sees what."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from api.entities import status_id_of_post
from feed_project.pagination import Cursor
from posts.models import Visibility
from posts.services import create_post, delete_post, like, repost
from relations.services import block, follow, mute, unfollow
from tests.factories import UserFactory
from timelines.notifications import selectors
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture
def run(django_capture_on_commit_callbacks):
    """Run what a block schedules on commit: the notification tasks (eager in tests)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def token(alice, make_token):
    return make_token(alice)


@pytest.fixture
def busy(alice, bob, carol, run):
    """Alice's notifications, oldest first: Bob follows (the fixture), Carol likes and
    reposts Alice's post, mentions her and replies to her."""
    post = create_post(author=alice, text="alice's post")
    with run():
        like(user=carol, post=post)
    with run():
        repost(user=carol, post=post)
    with run():
        mention = create_post(author=carol, text="hello @alice")
    with run():
        reply = create_post(author=carol, text="a reply", in_reply_to=post)
    return {"post": post, "mention": mention, "reply": reply}


def unread(user: User) -> int:
    return User.objects.get(pk=user.pk).unread_notifications


def site_ids(user: User) -> list[str]:
    return [str(n.pk) for n in selectors.notifications_page(user=user, cursor=Cursor()).items]


def test_the_list_is_the_sites_in_mastodons_types_newest_first(api, alice, bob, carol, busy, token):
    answer = api.get("/api/v1/notifications", token=token)
    assert answer.status_code == 200, answer.content
    notes = answer.json()
    assert [n["type"] for n in notes] == ["mention", "mention", "reblog", "favourite", "follow"]
    assert [n["id"] for n in notes] == site_ids(alice)
    assert [n["account"]["id"] for n in notes] == [str(carol.pk)] * 4 + [str(bob.pk)]
    reply, mention, reblogged, liked, followed = notes
    assert reply["status"]["id"] == status_id_of_post(busy["reply"].pk)
    assert mention["status"]["id"] == status_id_of_post(busy["mention"].pk)
    assert reblogged["status"]["id"] == liked["status"]["id"] == status_id_of_post(busy["post"].pk)
    assert followed["status"] is None
    assert all(ISO.match(n["created_at"]) for n in notes)
    assert liked["group_key"].startswith(f"favourite-{liked['status']['id']}-")
    assert reply["group_key"] == f"ungrouped-{reply['id']}"
    # Ids are decimals of increasing row ids: they compare as clients compare them.
    by_client = sorted((n["id"] for n in notes), key=lambda i: (len(i), i), reverse=True)
    assert by_client == [n["id"] for n in notes]


def test_one_page_costs_the_same_queries_whatever_it_holds(api, alice, carol, busy, token, run):
    def cost():
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/api/v1/notifications", token=token).status_code == 200
        return len(queries)

    cost()  # the token's first use records its owner active
    before = cost()
    for n in range(4):
        people = UserFactory(username=f"liker{n}")
        with run():
            like(user=people, post=busy["post"])
        with run():
            create_post(author=people, text=f"@alice number {n}")
    assert cost() == before


def test_types_exclude_types_and_account_id(api, alice, bob, carol, busy, token):
    def types(**params):
        answer = api.get("/api/v1/notifications", token=token, **params)
        assert answer.status_code == 200, answer.content
        return [n["type"] for n in answer.json()]

    assert types(**{"types[]": ["mention"]}) == ["mention", "mention"]
    assert types(**{"types[]": ["favourite", "follow"]}) == ["favourite", "follow"]
    assert types(types="reblog") == ["reblog"]
    assert types(**{"exclude_types[]": ["mention", "reblog"]}) == ["favourite", "follow"]
    assert types(**{"types[]": ["poll"]}) == []
    assert types(account_id=str(bob.pk)) == ["follow"]
    assert types(account_id=str(carol.pk), **{"types[]": ["reblog"]}) == ["reblog"]
    bad = api.get("/api/v1/notifications", token=token, account_id="bob")
    assert bad.status_code == 422 and "account_id" in bad.json()["error"]


def link_of(answer, rel: str) -> str | None:
    found = re.search(rf'<([^>]+)>; rel="{rel}"', answer.get("Link", ""))
    return found.group(1) if found else None


def test_paging_by_max_id_min_id_and_since_id(api, alice, busy, token):
    every = [n["id"] for n in api.get("/api/v1/notifications", token=token).json()]
    first = api.get("/api/v1/notifications", token=token, limit=2)
    assert [n["id"] for n in first.json()] == every[:2]
    nxt = link_of(first, "next")
    assert f"max_id={every[1]}" in nxt and "limit=2" in nxt
    second = api.get(nxt.replace("http://testserver", ""), token=token)
    assert [n["id"] for n in second.json()] == every[2:4]
    assert f"min_id={every[2]}" in link_of(second, "prev")
    up = api.get("/api/v1/notifications", token=token, min_id=every[3], limit=2)
    assert [n["id"] for n in up.json()] == every[1:3]
    since = api.get("/api/v1/notifications", token=token, since_id=every[2])
    assert [n["id"] for n in since.json()] == every[:2]
    between = api.get("/api/v1/notifications", token=token, min_id=every[4], max_id=every[1])
    assert [n["id"] for n in between.json()] == every[2:4]
    for name in ("max_id", "since_id", "min_id"):
        bad = api.get("/api/v1/notifications", token=token, **{name: "abc"})
        assert bad.status_code == 422 and name in bad.json()["error"]
    assert api.get("/api/v1/notifications", token=token, limit="many").status_code == 422


def test_one_notification_and_the_404s(api, alice, bob, carol, busy, token, make_token):
    newest = api.get("/api/v1/notifications", token=token).json()[0]
    one = api.get(f"/api/v1/notifications/{newest['id']}/", token=token)
    assert one.status_code == 200 and one.json() == newest
    for wrong in ("0", "abc", "9" * 30, "-1"):
        missing = api.get(f"/api/v1/notifications/{wrong}", token=token)
        assert missing.status_code == 404 and missing.json() == {"error": "Record not found"}
    # Someone else's notification is not there for Carol.
    other = api.get(f"/api/v1/notifications/{newest['id']}", token=make_token(carol))
    assert other.status_code == 404


def test_auth_and_scopes(api, alice, busy, make_token):
    assert api.get("/api/v1/notifications").status_code == 401
    assert api.get("/api/v1/notifications", token="nope").status_code == 401
    reader = make_token(alice, "read:statuses write:statuses")
    assert api.get("/api/v1/notifications", token=reader).status_code == 403
    assert api.post("/api/v1/notifications/clear", token=reader).status_code == 403
    only_read = make_token(alice, "read")
    assert api.get("/api/v2/notifications", token=only_read).status_code == 200
    assert api.post("/api/v1/notifications/clear", token=only_read).status_code == 403


def test_dismiss_takes_one_off_the_page_and_the_unread_count(api, alice, carol, busy, token):
    before = unread(alice)
    newest = site_ids(alice)[0]
    answer = api.post(f"/api/v1/notifications/{newest}/dismiss", token=token)
    assert answer.status_code == 200 and answer.json() == {}
    assert newest not in site_ids(alice)
    assert unread(alice) == before - 1
    again = api.post(f"/api/v1/notifications/{newest}/dismiss", token=token)
    assert again.status_code == 404
    assert api.post("/api/v1/notifications/xyz/dismiss", token=token).status_code == 404
    # A read one leaves the count alone.
    Notification.objects.filter(recipient_id=alice.pk).update(read_at="2026-01-01T00:00Z")
    User.objects.filter(pk=alice.pk).update(unread_notifications=0)
    api.post(f"/api/v1/notifications/{site_ids(alice)[0]}/dismiss", token=token)
    assert unread(alice) == 0


def test_someone_elses_notification_cannot_be_dismissed(api, alice, carol, busy, make_token):
    theirs = site_ids(alice)[0]
    answer = api.post(f"/api/v1/notifications/{theirs}/dismiss", token=make_token(carol))
    assert answer.status_code == 404
    assert theirs in site_ids(alice)


def test_clear_empties_the_page_and_the_count(api, alice, busy, token, alice_client):
    assert unread(alice) == 5
    answer = api.post("/api/v1/notifications/clear", token=token)
    assert answer.status_code == 200 and answer.json() == {}
    assert site_ids(alice) == [] and unread(alice) == 0
    assert api.get("/api/v1/notifications", token=token).json() == []
    page = alice_client.get("/notifications/")
    assert page.status_code == 200 and "data-notification-id" not in page.content.decode()


def test_unread_counts_follow_the_sites_read_state(api, alice, busy, token):
    def counts(**params):
        one = api.get("/api/v1/notifications/unread_count", token=token, **params)
        two = api.get("/api/v2/notifications/unread_count", token=token, **params)
        assert one.status_code == two.status_code == 200, (one.content, two.content)
        return one.json()["count"], two.json()["count"]

    # Five notifications; the like and the repost are groups of their own kinds.
    assert counts() == (5, 5)
    assert counts(limit=2) == (2, 2)
    assert counts(**{"types[]": ["mention"]}) == (2, 2)
    ids = site_ids(alice)
    marked = api.post("/api/v1/markers", {"notifications": {"last_read_id": ids[2]}}, token=token)
    assert marked.status_code == 200, marked.content
    assert counts() == (2, 2) and unread(alice) == 2


def test_blocked_and_muted_people_are_not_shown(api, alice, bob, carol, busy, token, run):
    with run():
        block(user=alice, target=carol)
    assert [n["account"]["id"] for n in api.get("/api/v1/notifications", token=token).json()] == [
        str(bob.pk)
    ]
    with run():
        mute(user=alice, target=bob)
    assert api.get("/api/v1/notifications", token=token).json() == []
    assert api.get("/api/v2/notifications", token=token).json()["notification_groups"] == []
    assert api.get("/api/v1/notifications/unread_count", token=token).json() == {"count": 0}
    hidden = Notification.objects.filter(recipient_id=alice.pk).values_list("pk", flat=True)
    for note_id in hidden:
        assert api.get(f"/api/v1/notifications/{note_id}", token=token).status_code == 404
    # The site's page hides them too.
    assert site_ids(alice) == []


def test_a_post_the_reader_may_no_longer_see_is_not_shown(api, alice, token, run):
    dave = UserFactory(username="dave")
    with run():
        follow(follower=alice, followee=dave)
    with run():
        secret = create_post(
            author=dave, text="for followers, @alice", visibility=Visibility.FOLLOWERS
        )
    with run():
        gone = create_post(author=dave, text="soon gone, @alice")
    shown = api.get("/api/v1/notifications", token=token, **{"types[]": ["mention"]}).json()
    assert [n["status"]["id"] for n in shown] == [
        status_id_of_post(gone.pk),
        status_id_of_post(secret.pk),
    ]
    with run():
        delete_post(post=gone)
    with run():
        unfollow(follower=alice, followee=dave)
    assert api.get("/api/v1/notifications", token=token, **{"types[]": ["mention"]}).json() == []
    grouped = api.get("/api/v2/notifications", token=token).json()
    assert grouped["statuses"] == []
    for note in Notification.objects.filter(recipient_id=alice.pk, kind="mention"):
        assert api.get(f"/api/v1/notifications/{note.pk}", token=token).status_code == 404


def test_grouped_notifications_as_mastodon_groups_them(api, alice, bob, carol, busy, token, run):
    with run():
        like(user=bob, post=busy["post"])
    answer = api.get("/api/v2/notifications", token=token)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    groups = body["notification_groups"]
    assert [g["type"] for g in groups] == ["favourite", "mention", "mention", "reblog", "follow"]
    liked = groups[0]
    assert liked["notifications_count"] == 2
    assert liked["sample_account_ids"] == [str(bob.pk), str(carol.pk)]
    assert liked["status_id"] == status_id_of_post(busy["post"].pk)
    assert liked["group_key"].startswith(f"favourite-{liked['status_id']}-")
    assert int(liked["page_min_id"]) < int(liked["page_max_id"])
    assert liked["most_recent_notification_id"] == liked["page_max_id"]
    assert groups[1]["group_key"] == f"ungrouped-{groups[1]['most_recent_notification_id']}"
    assert groups[4]["status_id"] is None
    assert {a["id"] for a in body["accounts"]} == {str(bob.pk), str(carol.pk)}
    assert {s["id"] for s in body["statuses"]} == {status_id_of_post(p.pk) for p in busy.values()}
    # One group by its key, with its members.
    one = api.get(f"/api/v2/notifications/{liked['group_key']}", token=token)
    assert one.status_code == 200, one.content
    assert one.json()["notification_groups"] == [liked]
    single = api.get(f"/api/v2/notifications/{groups[1]['group_key']}", token=token).json()
    assert single["notification_groups"] == [groups[1]]
    follows = api.get(f"/api/v2/notifications/{groups[4]['group_key']}", token=token).json()
    assert follows["notification_groups"][0]["sample_account_ids"] == [str(bob.pk)]
    # Not grouped when the client asks for other groups only.
    apart = api.get("/api/v2/notifications", token=token, **{"grouped_types[]": ["follow"]})
    apart_groups = apart.json()["notification_groups"]
    assert [g["type"] for g in apart_groups].count("favourite") == 2
    assert all(g["notifications_count"] == 1 for g in apart_groups)
    for wrong in ("nope", "favourite-1-x", "ungrouped-abc", "follow-1", "mention-1-2", "x" * 99):
        missing = api.get(f"/api/v2/notifications/{wrong}", token=token)
        assert missing.status_code == 404, (wrong, missing.content)


def test_grouped_pages_link_by_notification_ids(api, alice, busy, token):
    every = [n["id"] for n in api.get("/api/v1/notifications", token=token).json()]
    first = api.get("/api/v2/notifications", token=token, limit=2)
    assert f"max_id={every[1]}" in link_of(first, "next")
    rest = api.get(link_of(first, "next").replace("http://testserver", ""), token=token)
    assert [g["most_recent_notification_id"] for g in rest.json()["notification_groups"]] == [
        every[2],
        every[3],
    ]


def test_the_openapi_document_lists_them(api):
    paths = api.get("/api/openapi.json").json()["paths"]
    for path in (
        "/api/v1/notifications",
        "/api/v1/notifications/{notification_id}",
        "/api/v1/notifications/clear",
        "/api/v1/notifications/{notification_id}/dismiss",
        "/api/v1/notifications/unread_count",
        "/api/v2/notifications",
        "/api/v2/notifications/{group_key}",
        "/api/v2/notifications/unread_count",
    ):
        assert path in paths, path


def test_a_groups_accounts_and_dismissing_a_group(api, alice, bob, carol, busy, token, run):
    with run():
        like(user=bob, post=busy["post"])
    before = unread(alice)
    groups = api.get("/api/v2/notifications", token=token).json()["notification_groups"]
    liked = groups[0]
    people = api.get(f"/api/v2/notifications/{liked['group_key']}/accounts", token=token)
    assert people.status_code == 200, people.content
    assert [a["id"] for a in people.json()] == [str(bob.pk), str(carol.pk)]
    gone = api.post(f"/api/v2/notifications/{liked['group_key']}/dismiss", token=token)
    assert gone.status_code == 200 and gone.json() == {}
    assert unread(alice) == before - 2
    after = api.get("/api/v2/notifications", token=token).json()["notification_groups"]
    assert [g["group_key"] for g in after] == [g["group_key"] for g in groups[1:]]
    again = api.post(f"/api/v2/notifications/{liked['group_key']}/dismiss", token=token)
    assert again.status_code == 404
    assert api.get("/api/v2/notifications/nope/accounts", token=token).status_code == 404
