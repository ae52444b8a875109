"""Likes, reposts and their undoing, who liked or reposted, threads, edits' history and
source, and quotes in the Status, through a Django test client: each as the site's
buttons and pages do it, with their rules of who may see and do what."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pydantic import TypeAdapter

from api import schemas
from posts import ids
from posts.edits import edit_post
from posts.models import Post, Visibility
from posts.services import create_post, delete_post, like, repost
from relations.services import block, follow
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def sid(post: Post) -> str:
    return ids.decimal_of_key(post.timeline_key)


@pytest.fixture
def token(carol, make_token):
    """Carol's: she follows nobody."""
    return make_token(carol)


def test_favourite_and_unfavourite_change_the_count_and_are_idempotent(api, alice, token):
    post = create_post(author=alice, text="like me")
    path = f"/api/v1/statuses/{sid(post)}"
    liked = api.post(f"{path}/favourite", token=token)
    assert liked.status_code == 200, liked.content
    assert liked.json()["favourited"] is True and liked.json()["favourites_count"] == 1
    again = api.post(f"{path}/favourite/", token=token).json()  # as on Mastodon: no error
    assert again["favourited"] is True and again["favourites_count"] == 1
    post.refresh_from_db()
    assert post.like_count == 1
    undone = api.post(f"{path}/unfavourite", token=token).json()
    assert undone["favourited"] is False and undone["favourites_count"] == 0
    assert api.post(f"{path}/unfavourite", token=token).json()["favourites_count"] == 0


def test_a_like_of_a_repost_is_a_like_of_its_original(api, alice, bob, token):
    post = create_post(author=alice, text="original")
    shared = repost(user=bob, post=post)
    liked = api.post(f"/api/v1/statuses/{sid(shared)}/favourite", token=token).json()
    assert liked["id"] == sid(post) and liked["favourited"] is True


def test_reblog_answers_the_wrapper_and_unreblog_the_original(api, alice, carol, token):
    post = create_post(author=alice, text="share me")
    path = f"/api/v1/statuses/{sid(post)}"
    answer = api.post(f"{path}/reblog", {"visibility": "public"}, token=token)
    assert answer.status_code == 200, answer.content
    wrapper = answer.json()
    assert wrapper["id"] != sid(post) and wrapper["account"]["id"] == str(carol.pk)
    assert wrapper["reblog"]["id"] == sid(post)
    assert wrapper["reblogged"] is True and wrapper["reblog"]["reblogged"] is True
    assert wrapper["reblog"]["reblogs_count"] == 1
    assert api.post(f"{path}/reblog", token=token).json()["id"] == wrapper["id"]  # the same one
    form = api.post(f"{path}/reblog", {"visibility": "unlisted"}, token=token, json=False)
    assert form.status_code == 200 and form.json()["id"] == wrapper["id"]
    bad = api.post(f"{path}/reblog", {"visibility": "everyone"}, token=token)
    assert bad.status_code == 422 and "visibility" in bad.json()["details"]
    undone = api.post(f"{path}/unreblog", token=token).json()
    assert undone["id"] == sid(post) and undone["reblogged"] is False
    assert undone["reblogs_count"] == 0
    assert api.post(f"{path}/unreblog", token=token).status_code == 200


def test_a_post_one_may_not_see_is_a_404_and_one_not_to_share_the_services_refusal(
    api, alice, bob, make_token, token
):
    followers = create_post(author=alice, text="for followers", visibility=Visibility.FOLLOWERS)
    direct = create_post(author=alice, text="@bob only", visibility=Visibility.DIRECT)
    for post in (followers, direct):
        for action in ("favourite", "unfavourite", "reblog", "unreblog"):
            answer = api.post(f"/api/v1/statuses/{sid(post)}/{action}", token=token)
            assert answer.status_code == 404, (post.visibility, action)
            assert answer.json()["error"]
    bobs = make_token(bob)
    refused = api.post(f"/api/v1/statuses/{sid(followers)}/reblog", token=bobs)
    assert refused.status_code == 403 and "reposted" in refused.json()["error"]
    assert api.post(f"/api/v1/statuses/{sid(direct)}/reblog", token=bobs).status_code == 403
    assert api.post(f"/api/v1/statuses/{sid(followers)}/favourite", token=bobs).status_code == 200


def test_blocked_people_may_not_act_on_each_others_posts(api, alice, carol, token):
    post = create_post(author=alice, text="not for carol")
    block(user=alice, target=carol)
    for action in ("favourite", "reblog"):
        assert api.post(f"/api/v1/statuses/{sid(post)}/{action}", token=token).status_code == 404


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1" * 40, "12.5"])
def test_bad_status_ids_are_404s(api, bad, token):
    for action in ("favourite", "reblog"):
        assert api.post(f"/api/v1/statuses/{bad}/{action}", token=token).status_code == 404
    for what in ("context", "history", "source", "favourited_by", "reblogged_by"):
        answer = api.get(f"/api/v1/statuses/{bad}/{what}", token=token)
        assert answer.status_code == 404 and answer.json()["error"], what


def test_actions_need_a_token_with_their_scope(api, alice, carol, make_token):
    post = create_post(author=alice, text="scoped")
    path = f"/api/v1/statuses/{sid(post)}"
    assert api.post(f"{path}/favourite").status_code == 401
    reader = make_token(carol, "read")
    assert api.post(f"{path}/favourite", token=reader).status_code == 403
    favourites = make_token(carol, "write:favourites")
    assert api.post(f"{path}/favourite", token=favourites).status_code == 200
    assert api.post(f"{path}/reblog", token=favourites).status_code == 403
    statuses = make_token(carol, "write:statuses")
    assert api.post(f"{path}/reblog", token=statuses).status_code == 200
    assert api.get(f"{path}/source").status_code == 401
    assert api.get(f"{path}/source", token=favourites).status_code == 403
    assert api.get(f"{path}/source", token=make_token(carol, "read:statuses")).status_code == 200


def test_favourited_by_pages_newest_first_with_links_and_leaves_out_blocked_people(
    api, alice, carol, make_token
):
    post = create_post(author=alice, text="popular")
    likers = [UserFactory(username=f"liker{n}") for n in range(4)]
    for person in likers:
        like(user=person, post=post)
    block(user=carol, target=likers[1])
    path = f"/api/v1/statuses/{sid(post)}/favourited_by"
    seen, answer = [], api.get(path, token=make_token(carol), limit=2)
    while True:
        assert answer.status_code == 200, answer.content
        seen += [account["username"] for account in answer.json()]
        links = answer.headers.get("Link", "")
        if 'rel="next"' not in links:
            break
        following = links.split(";")[0].strip("<>")
        answer = api.get(following.replace("http://testserver", ""), token=make_token(carol))
    assert seen == ["liker3", "liker2", "liker0"]
    assert [a["username"] for a in api.get(path).json()] == ["liker3", "liker2", "liker1", "liker0"]
    assert api.get(path, max_id="not-an-id").status_code == 422


def test_reblogged_by_lists_live_reposts_by_their_status_ids(api, alice, bob, carol, token):
    post = create_post(author=alice, text="spread")
    repost(user=bob, post=post)
    shared = repost(user=carol, post=post)
    path = f"/api/v1/statuses/{sid(post)}/reblogged_by"
    answer = api.get(path, token=token, limit=1)
    assert [a["username"] for a in answer.json()] == ["carol"]
    assert f"max_id={sid(shared)}" in answer.headers["Link"]
    older = api.get(path, token=token, max_id=sid(shared)).json()
    assert [a["username"] for a in older] == ["bob"]
    delete_post(post=shared)
    assert [a["username"] for a in api.get(path).json()] == ["bob"]


def test_who_liked_a_post_one_may_not_see_is_a_404(api, alice, bob, token):
    post = create_post(author=alice, text="followers", visibility=Visibility.FOLLOWERS)
    like(user=bob, post=post)
    for what in ("favourited_by", "reblogged_by", "context", "history", "source"):
        assert api.get(f"/api/v1/statuses/{sid(post)}/{what}", token=token).status_code == 404


def test_a_list_of_people_costs_the_same_queries_whatever_it_holds(api, alice, token):
    post = create_post(author=alice, text="counted")
    path = f"/api/v1/statuses/{sid(post)}/favourited_by"

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get(path, token=token).status_code == 200
        return len(captured)

    like(user=UserFactory(), post=post)
    queries()  # the token's first use records its owner active
    few = queries()
    for _ in range(5):
        like(user=UserFactory(), post=post)
    assert queries() == few


def test_context_is_the_threads_ancestors_and_replies_as_the_viewer_may_see_them(
    api, alice, bob, carol, token
):
    root = create_post(author=alice, text="root")
    private = create_post(
        author=alice, text="followers only", in_reply_to=root, visibility=Visibility.FOLLOWERS
    )
    middle = create_post(author=bob, text="middle", in_reply_to=root)
    gone = create_post(author=alice, text="gone", in_reply_to=middle)
    post = create_post(author=bob, text="the post", in_reply_to=gone)
    delete_post(post=gone)
    first = create_post(author=alice, text="first reply", in_reply_to=post)
    hidden = create_post(
        author=alice, text="second, followers", in_reply_to=post, visibility=Visibility.FOLLOWERS
    )
    third = create_post(author=carol, text="third reply", in_reply_to=post)
    answer = api.get(f"/api/v1/statuses/{sid(post)}/context", token=token)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [s["id"] for s in body["ancestors"]] == [sid(root), sid(middle)]
    assert [s["id"] for s in body["descendants"]] == [sid(first), sid(third)]
    bobs = api.get(f"/api/v1/statuses/{sid(post)}/context/").json()  # signed out: as carol
    assert [s["id"] for s in bobs["descendants"]] == [sid(first), sid(third)]
    follower = api.get(f"/api/v1/statuses/{sid(private)}/context", token=token)
    assert follower.status_code == 404  # a followers-only post's thread, to a stranger
    assert hidden.pk not in answer.content.decode()


def test_context_of_a_followers_only_post_for_a_follower(api, alice, bob, make_token):
    root = create_post(author=alice, text="root", visibility=Visibility.FOLLOWERS)
    reply = create_post(author=bob, text="reply", in_reply_to=root)
    body = api.get(f"/api/v1/statuses/{sid(reply)}/context", token=make_token(bob)).json()
    assert [s["id"] for s in body["ancestors"]] == [sid(root)]
    # The reply took its parent's level: a stranger sees neither.
    assert api.get(f"/api/v1/statuses/{sid(reply)}/context").status_code == 404


def test_an_ancestor_by_someone_blocked_is_left_out(api, alice, bob, carol, token):
    root = create_post(author=alice, text="root")
    reply = create_post(author=bob, text="reply", in_reply_to=root)
    block(user=alice, target=carol)
    body = api.get(f"/api/v1/statuses/{sid(reply)}/context", token=token).json()
    assert body["ancestors"] == []
    assert [
        s["id"] for s in api.get(f"/api/v1/statuses/{sid(reply)}/context").json()["ancestors"]
    ] == [sid(root)]


def test_history_lists_every_version_oldest_first_and_source_the_text(
    api, alice, bob, make_token, token
):
    post = create_post(author=alice, text="first words")
    one = api.get(f"/api/v1/statuses/{sid(post)}/history").json()
    assert [v["content"] for v in one] == ["<p>first words</p>"]
    edit_post(post=post, changes={"text": "second words", "spoiler_text": "cw"})
    versions = api.get(f"/api/v1/statuses/{sid(post)}/history", token=token).json()
    assert [v["content"] for v in versions] == ["<p>first words</p>", "<p>second words</p>"]
    assert [v["spoiler_text"] for v in versions] == ["", "cw"]
    assert [v["sensitive"] for v in versions] == [False, True]
    assert versions[0]["account"]["id"] == str(alice.pk)
    assert versions[0]["created_at"] < versions[1]["created_at"]
    shown = api.get(f"/api/v1/statuses/{sid(post)}", token=token).json()
    assert shown["edited_at"] == versions[1]["created_at"] and shown["sensitive"] is True
    source = api.get(f"/api/v1/statuses/{sid(post)}/source", token=make_token(alice)).json()
    assert source == {"id": sid(post), "text": "second words", "spoiler_text": "cw"}
    # As on Mastodon, whoever may see the status may read its source.
    assert api.get(f"/api/v1/statuses/{sid(post)}/source", token=token).status_code == 200
    shared = repost(user=bob, post=post)
    assert api.get(f"/api/v1/statuses/{sid(shared)}/history").status_code == 404


def test_a_quote_shows_the_quoted_status_only_to_whom_may_see_it(api, alice, bob, carol, token):
    quoted = create_post(author=alice, text="worth quoting")
    quote = create_post(author=bob, text="look at this", quote_of=quoted)
    shown = api.get(f"/api/v1/statuses/{sid(quote)}", token=token).json()
    assert shown["quote"]["state"] == "accepted"
    assert shown["quote"]["quoted_status"]["id"] == sid(quoted)
    assert shown["quote"]["quoted_status"]["content"] == "<p>worth quoting</p>"
    assert shown["quote"]["quoted_status"]["quote"] is None
    TypeAdapter(schemas.Status).validate_python(shown)  # as the OpenAPI document declares it
    assert shown["quotes_count"] == 0
    assert shown["quote_approval"]["current_user"] == "automatic"
    plain = api.get(f"/api/v1/statuses/{sid(quoted)}", token=token).json()
    assert plain["quote"] is None and plain["quote_approval"]["automatic"] == ["public"]
    block(user=alice, target=carol)
    hidden = api.get(f"/api/v1/statuses/{sid(quote)}", token=token).json()
    assert hidden["quote"] == {"state": "deleted", "quoted_status": None}
    document = api.get("/api/openapi.json").json()["components"]["schemas"]
    assert {"Quote", "QuoteApproval"} <= set(document)
    assert "quote" in document["Status"]["properties"]
    assert "worth quoting" not in str(hidden)
    delete_post(post=quoted)
    gone = api.get(f"/api/v1/statuses/{sid(quote)}").json()
    assert gone["quote"] == {"state": "deleted", "quoted_status": None}


def test_a_followers_only_post_may_not_be_quoted_says_its_approval(api, alice, bob, make_token):
    post = create_post(author=alice, text="mine", visibility=Visibility.FOLLOWERS)
    shown = api.get(f"/api/v1/statuses/{sid(post)}", token=make_token(bob)).json()
    assert shown["quote_approval"] == {"automatic": [], "manual": [], "current_user": "denied"}


def test_a_page_of_quotes_hydrates_the_quoted_posts_in_one_query(api, alice, bob, make_token):
    follow(follower=bob, followee=alice)
    token = make_token(bob)
    target = create_post(author=alice, text="quoted")
    create_post(author=alice, text="a quote", quote_of=target)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get(f"/api/v1/accounts/{alice.pk}/statuses", token=token).status_code == 200
        return len(captured)

    queries()
    few = queries()
    for n in range(4):
        create_post(author=alice, text=f"quote {n}", quote_of=create_post(author=bob, text=f"{n}"))
    assert queries() == few


def test_a_page_of_people_all_left_out_still_links_to_the_next(api, alice, carol, token):
    post = create_post(author=alice, text="liked")
    likers = [UserFactory(username=f"fan{n}") for n in range(3)]
    for person in likers:
        like(user=person, post=post)
    block(user=likers[2], target=carol)
    path = f"/api/v1/statuses/{sid(post)}/favourited_by"
    answer = api.get(path, token=token, limit=1)
    assert answer.json() == [] and 'rel="next"' in answer.headers["Link"]
    following = answer.headers["Link"].split(";")[0].strip("<>").replace("http://testserver", "")
    assert [a["username"] for a in api.get(following, token=token).json()] == ["fan1"]


def test_a_thread_costs_the_same_queries_however_long(api, alice, bob, token):
    root = create_post(author=alice, text="root")
    post = create_post(author=bob, text="post", in_reply_to=root)
    create_post(author=alice, text="a reply", in_reply_to=post)
    path = f"/api/v1/statuses/{sid(post)}/context"

    def queries(status: Post) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert (
                api.get(f"/api/v1/statuses/{sid(status)}/context", token=token).status_code == 200
            )
        return len(captured)

    queries(post)  # the token's first use records its owner active
    few = queries(post)
    deeper = post
    for n in range(4):
        deeper = create_post(author=bob if n % 2 else alice, text=f"deeper {n}", in_reply_to=deeper)
    for n in range(4):
        create_post(author=UserFactory(), text=f"reply {n}", in_reply_to=deeper)
    assert queries(deeper) == few
    assert len(api.get(path, token=token).json()["descendants"]) == 2


def test_unreblog_by_the_wrappers_id_undoes_the_repost(api, alice, token):
    post = create_post(author=alice, text="share and take back")
    wrapper = api.post(f"/api/v1/statuses/{sid(post)}/reblog", token=token).json()
    undone = api.post(f"/api/v1/statuses/{wrapper['id']}/unreblog", token=token).json()
    assert undone["id"] == sid(post) and undone["reblogged"] is False
    assert api.get(f"/api/v1/statuses/{wrapper['id']}", token=token).status_code == 404


def test_reposting_keeps_the_repost_buttons_rule_for_unconfirmed_addresses(
    api, alice, make_token, settings
):
    settings.REQUIRE_EMAIL_VERIFICATION = True
    post = create_post(author=alice, text="share me")
    unconfirmed = make_token(UserFactory(email_verified_at=None))
    refused = api.post(f"/api/v1/statuses/{sid(post)}/reblog", token=unconfirmed)
    assert refused.status_code == 403 and "e-mail" in refused.json()["error"]
    # A like needs no confirmed address on the site either.
    assert api.post(f"/api/v1/statuses/{sid(post)}/favourite", token=unconfirmed).status_code == 200
