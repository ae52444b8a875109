"""masto.js for the rest of the acceptance list, against a live server with a real
Celery worker: composing (media with alt text, quote, edit, history), the profile's
buttons and relationships, favourites, reblogs and threads, notifications (v1 and
grouped v2) and markers, and search.

Each test sets up its world through the site's services, runs one scenario of
``tests/api/js/`` (``test_masto_js.run_scenario``), waits for the queue to drain,
and checks the report against the site's own state: its posts, relations, home
feed, notifications page, markers and search, not only what masto.js printed.
"""

import pytest

from accounts.services import refresh_last_active
from feed_project.pagination import Cursor
from posts import ids
from posts.edits import history
from posts.media_models import PostMedia
from posts.models import Like, Post
from posts.quotes import quoted_posts
from posts.search import normalize_query, search
from posts.selectors import thread
from posts.services import create_post
from relations.selectors import relationships
from relations.services import follow
from tests.api.test_masto_js import run_scenario
from tests.factories import UserFactory
from tests.images import image_bytes
from timelines.home import home_feed
from timelines.markers.selectors import markers_of
from timelines.notifications.selectors import notifications_page, unread

pytestmark = pytest.mark.django_db(transaction=True)


def post_of(status_id: str) -> Post:
    return Post.objects.get(timeline_key=ids.key_of_decimal(status_id))


def status_id(post: Post) -> str:
    return ids.decimal_of_key(post.timeline_key)


def home_ids(reader, limit: int = 20) -> list[str]:
    return [
        ids.decimal_of_key(item.key)
        for item in home_feed(reader=reader, cursor=Cursor(), limit=limit).items
    ]


def worker_ran(queue, task: str) -> bool:
    """Whether a worker of ``queue`` ran ``task``: the scenario's work was not done
    in process."""
    return any(f"{task}[" in worker.log() for worker in queue.workers)


@pytest.fixture
def people(live_queue):
    """Alice and Bob, both seen lately (their home feeds are kept and pushed to)."""
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    for person in (alice, bob):
        refresh_last_active(user=person)
    return alice, bob


def test_masto_js_uploads_an_image_quotes_edits_and_reads_history(
    live_server,
    live_queue,
    people,
    make_token,
    tmp_path,
):
    alice, bob = people
    follow(follower=alice, followee=bob)
    follow(follower=bob, followee=alice)  # he may see her followers-only post, not quote it
    image = tmp_path / "red.png"
    image.write_bytes(image_bytes("PNG", size=(40, 30)))

    report = run_scenario(
        "quote_edit_and_media",
        live_server.url,
        FEED_ALICE_TOKEN=make_token(alice),
        FEED_BOB_TOKEN=make_token(bob),
        FEED_IMAGE_PATH=str(image),
    )
    live_queue.wait_for_drain()

    assert report["media"]["type"] == "image"
    assert report["media"]["description"] == "A red square"
    assert report["media"]["fileStatus"] == 200
    assert report["media"]["fileType"].startswith("image/")
    assert report["posted"]["media"] == [
        {"id": report["media"]["id"], "description": "A red square"}
    ]
    picture = post_of(report["posted"]["id"])
    attached = PostMedia.objects.filter(author_id=alice.pk, post_id=picture.pk)
    assert [item.alt_text for item in attached] == ["A red square"]

    assert picture.text == "A red picture through masto.js"
    assert picture.edited_at is not None
    assert report["edited"]["editedAt"] is not None
    assert "A red picture" in report["edited"]["content"]
    versions = history(picture)
    assert [version.text for version in versions] == [
        "A red picture through masto.js",
        "A picture through masto.js",
    ]
    # The API lists them oldest first, as Mastodon does.
    assert len(report["history"]) == 2
    assert "A picture" in report["history"][0] and "A red picture" in report["history"][1]

    quote = post_of(report["quote"]["id"])
    assert quote.author_id == bob.pk and quote.quote_of_id == picture.pk
    assert quoted_posts([quote], viewer_id=alice.pk) == {picture.pk: picture}
    assert report["quote"]["state"] == "accepted"
    assert report["quote"]["quotedId"] == report["posted"]["id"]
    assert "A red picture" in report["quote"]["quotedAfterEdit"]
    assert report["quoteOfPrivate"] == 403
    assert Post.objects.filter(author=bob).count() == 1  # the refused quote made nothing

    # Bob's quote reached Alice, who follows him, through the worker.
    assert report["quote"]["id"] in report["aliceHome"]
    assert report["quote"]["id"] in home_ids(alice)
    assert worker_ran(live_queue, "timelines.fan_out_post")


def test_masto_js_follows_unfollows_mutes_blocks_and_reads_relationships(
    live_server,
    live_queue,
    people,
    make_token,
):
    alice, bob = people
    carol = UserFactory(username="carol")
    dave = UserFactory(username="dave")
    erin = UserFactory(username="erin", locked=True)
    bobs_post = create_post(author=bob, text="bob was here first")
    live_queue.wait_for_drain()

    report = run_scenario(
        "follow_block_mute",
        live_server.url,
        FEED_ALICE_TOKEN=make_token(alice),
        FEED_BOB_ID=str(bob.pk),
        FEED_CAROL_ID=str(carol.pk),
        FEED_DAVE_ID=str(dave.pk),
        FEED_ERIN_ID=str(erin.pk),
        FEED_BOBS_POST=status_id(bobs_post),
    )
    live_queue.wait_for_drain()

    post = status_id(bobs_post)
    assert post not in report["before"]
    assert report["followed"]["following"] is True
    assert post in report["afterFollow"]  # the follow's backfill, by the worker
    assert report["requested"] == {
        "id": str(erin.pk),
        "following": False,
        "requested": True,
        "muting": False,
        "blocking": False,
        "followedBy": False,
    }
    assert report["unfollowed"]["following"] is False
    assert post not in report["afterUnfollow"]
    assert post not in home_ids(alice)
    assert report["muted"]["muting"] is True
    assert report["blocked"]["blocking"] is True

    site = relationships(alice.pk, [bob.pk, carol.pk, dave.pk, erin.pk])
    expected = [
        {
            "id": str(pk),
            "following": site[pk]["following"],
            "requested": site[pk]["requested"],
            "muting": site[pk]["muting"],
            "blocking": site[pk]["blocking"],
            "followedBy": site[pk]["followed_by"],
        }
        for pk in (bob.pk, carol.pk, dave.pk, erin.pk)
    ]
    assert report["relationships"] == expected
    assert site[carol.pk]["muting"] and site[dave.pk]["blocking"] and site[erin.pk]["requested"]
    assert not site[bob.pk]["following"]
    assert report["mutes"] == [str(carol.pk)]
    assert report["blocks"] == [str(dave.pk)]
    assert worker_ran(live_queue, "timelines.sync_author")  # the follow's backfill


def test_masto_js_favourites_reblogs_undoes_both_and_reads_a_thread(
    live_server,
    live_queue,
    people,
    make_token,
):
    alice, bob = people
    follow(follower=bob, followee=alice)
    live_queue.wait_for_drain()

    report = run_scenario(
        "favourite_reblog_context",
        live_server.url,
        FEED_ALICE_TOKEN=make_token(alice),
        FEED_BOB_TOKEN=make_token(bob),
    )
    live_queue.wait_for_drain()

    assert report["favourited"] == {"favourited": True, "count": 1}
    assert report["reblog"]["of"] == report["original"]
    assert report["reblog"]["reblogged"] is True
    assert report["seen"] == {"favourites": 1, "reblogs": 1, "replies": 1}
    assert report["favouritedBy"] == [str(alice.pk)]
    assert report["rebloggedBy"] == [str(alice.pk)]
    assert report["unfavourited"] == {"favourited": False, "count": 0}
    assert report["unreblogged"] == {"reblogged": False, "count": 0}
    assert report["favouritedAgain"] is True

    original = post_of(report["original"])
    assert (original.like_count, original.repost_count, original.reply_count) == (0, 0, 1)
    assert not Like.objects.filter(user_id=alice.pk, post_id=original.pk).exists()
    assert not Post.objects.visible().filter(author=alice, repost_of=original).exists()
    answer = post_of(report["answer"])
    assert Like.objects.filter(user_id=alice.pk, post_id=answer.pk).exists()

    reply = post_of(report["reply"])
    shown = thread(reply, viewer_id=alice.pk, cursor=Cursor())
    assert report["context"]["ancestors"] == [status_id(post) for post in shown.ancestors]
    assert report["context"]["descendants"] == [status_id(post) for post in shown.replies.items]
    assert report["context"] == {
        "ancestors": [report["original"]],
        "descendants": [report["answer"]],
    }
    # Bob follows Alice: her reply is in his home feed, the undone reblog is not.
    assert report["reply"] in home_ids(bob)
    assert report["reblog"]["id"] not in home_ids(bob)


def test_masto_js_reads_notifications_grouped_and_not_and_writes_markers(
    live_server,
    live_queue,
    people,
    make_token,
):
    alice, bob = people
    alices_post = create_post(author=alice, text="something worth a like")
    live_queue.wait_for_drain()

    report = run_scenario(
        "notifications_and_markers",
        live_server.url,
        FEED_ALICE_TOKEN=make_token(alice),
        FEED_BOB_TOKEN=make_token(bob),
        FEED_ALICE_ID=str(alice.pk),
        FEED_ALICES_POST=status_id(alices_post),
    )
    live_queue.wait_for_drain()

    page = notifications_page(user=alice, cursor=Cursor(), limit=10)
    assert [note["id"] for note in report["notifications"]] == [str(note.pk) for note in page.items]
    by_type = {note["type"]: note for note in report["notifications"]}
    assert set(by_type) == {"follow", "favourite", "mention"}
    assert {note["account"] for note in report["notifications"]} == {str(bob.pk)}
    assert by_type["favourite"]["status"] == status_id(alices_post)
    assert by_type["mention"]["status"] == report["mention"]
    assert by_type["follow"]["status"] is None

    assert sorted(group["type"] for group in report["groups"]) == ["favourite", "follow", "mention"]
    for group in report["groups"]:
        assert group["count"] == 1 and group["accounts"] == [str(bob.pk)]
    assert report["groupedAccounts"] == [str(bob.pk)]
    assert set(report["groupedStatuses"]) == {status_id(alices_post), report["mention"]}

    assert report["unreadBefore"] == 3
    newest = report["notifications"][0]["id"]
    assert report["written"] == {"home": status_id(alices_post), "notifications": newest}
    markers = markers_of(user=alice, timelines=["home", "notifications"])
    assert report["markers"] == {
        name: {"lastReadId": marker.last_read_id, "version": marker.version}
        for name, marker in markers.items()
    }
    assert markers["notifications"].last_read_id == newest
    assert markers["home"].last_read_id == status_id(alices_post)
    assert report["unreadAfter"] == 0
    assert unread(user=alice) == []


def test_masto_js_searches_posts_people_and_tags_without_leaks(
    live_server,
    live_queue,
    people,
    make_token,
):
    alice, bob = people
    carol = UserFactory(username="carol", display_name="Carol Aardvark")
    public = create_post(author=bob, text="an aardvark walks by #aardvark")
    create_post(author=bob, text="an aardvark for my followers only", visibility="private")
    create_post(author=carol, text="nothing to see here")
    live_queue.wait_for_drain()

    report = run_scenario(
        "search", live_server.url, FEED_ALICE_TOKEN=make_token(alice), FEED_WORD="aardvark"
    )

    found = search(query=normalize_query("aardvark"), viewer=alice, cursor=Cursor(), limit=10)
    assert report["everything"]["statuses"] == [status_id(post) for post in found.posts.items]
    assert report["statuses"] == [status_id(public)]
    assert report["everything"]["accounts"] == [str(person.pk) for person in found.people]
    assert str(carol.pk) in report["everything"]["accounts"]
    assert "aardvark" in report["everything"]["hashtags"]
    assert report["byName"] == ["carol"]
    assert report["tag"] == ["aardvark"]
