"""Mastodon.py against a live server, for what a client does with a status: like it,
repost it, undo both, see who did, read its thread, its edits and its source, and show
a quote; each answer parsed as Mastodon.py parses Mastodon's."""

import pytest
from mastodon.errors import MastodonAPIError, MastodonNotFoundError

from posts import ids
from posts.edits import edit_post
from posts.models import Post, Visibility
from posts.services import create_post
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def sid(post: Post) -> str:
    """A status id as Mastodon.py is given one (it compares its own ids as text)."""
    return ids.decimal_of_key(post.timeline_key)


def test_a_mastodon_client_acts_on_statuses_and_reads_their_threads(live_server, sign_in):
    alice = UserFactory(username="alice")
    UserFactory(username="bob")
    bobs = sign_in("bob")

    root = create_post(author=alice, text="a thread starts")
    post = create_post(author=alice, text="first words", in_reply_to=root)

    liked = bobs.status_favourite(sid(post))
    assert liked["favourited"] is True and liked["favourites_count"] == 1
    assert bobs.status_favourite(sid(post))["favourites_count"] == 1  # twice is once
    assert [a["acct"] for a in bobs.status_favourited_by(sid(post))] == ["bob"]
    unliked = bobs.status_unfavourite(liked)
    assert unliked["favourited"] is False and unliked["favourites_count"] == 0
    assert bobs.status_favourited_by(sid(post)) == []

    wrapper = bobs.status_reblog(sid(post), visibility="public")
    assert str(wrapper["reblog"]["id"]) == sid(post) and wrapper["reblogged"] is True
    assert wrapper["account"]["acct"] == "bob" and wrapper["reblog"]["reblogs_count"] == 1
    assert [a["acct"] for a in bobs.status_reblogged_by(sid(post))] == ["bob"]
    undone = bobs.status_unreblog(sid(post))
    assert str(undone["id"]) == sid(post) and undone["reblogged"] is False
    assert bobs.status_reblogged_by(sid(post)) == []

    reply = bobs.status_reply(bobs.status(sid(post)), "a reply")
    context = bobs.status_context(sid(post))
    assert [str(s["id"]) for s in context["ancestors"]] == [sid(root)]
    assert [str(s["id"]) for s in context["descendants"]] == [str(reply["id"])]

    edit_post(post=post, changes={"text": "second words"})
    history = bobs.status_history(sid(post))
    assert ["words" in v["content"] for v in history] == [True, True]
    assert "first" in history[0]["content"] and "second" in history[1]["content"]
    assert bobs.status(sid(post))["edited_at"] is not None
    source = sign_in("alice").status_source(sid(post))
    assert source["text"] == "second words" and source["spoiler_text"] == ""

    quote = create_post(author=alice, text="quoting it", quote_of=root)
    shown = bobs.status(sid(quote))
    assert shown["quote"]["state"] == "accepted"
    assert str(shown["quote"]["quoted_status"]["id"]) == sid(root)


def test_a_mastodon_client_gets_mastodons_errors(live_server, sign_in):
    alice = UserFactory(username="alice")
    UserFactory(username="bob")
    bobs = sign_in("bob")
    hidden = create_post(author=alice, text="for followers", visibility=Visibility.FOLLOWERS)
    with pytest.raises(MastodonNotFoundError):
        bobs.status_favourite(sid(hidden))
    with pytest.raises(MastodonNotFoundError):
        bobs.status_context(sid(hidden))
    with pytest.raises(MastodonNotFoundError):
        bobs.status_source(sid(hidden))
    mine = sign_in("alice")
    with pytest.raises(MastodonAPIError) as refused:
        mine.status_reblog(sid(hidden))
    assert refused.value.args[1] == 403
