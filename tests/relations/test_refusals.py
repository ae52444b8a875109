"""What relations refuse, asked directly: the person a relation page or a profile names
(not found), and a follow, block or mute of oneself or across a block."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts import deletion
from feed_project import images
from feed_project.refusals import Forbidden, Invalid, NotFound
from relations import follow_import, muted_words
from relations.selectors import person_named, profile_person
from relations.services import BlockedError, SelfRelationError, block, follow, mute

pytestmark = pytest.mark.django_db


def test_a_username_no_one_has_is_not_found(alice):
    assert person_named("ALICE") == alice
    for name in ("nobody", "not a name", ""):
        with pytest.raises(NotFound) as caught:
            person_named(name)
        assert caught.value.message == "No such person."


def test_a_profile_of_no_one_or_of_an_account_being_deleted_is_not_found(alice, carol):
    assert profile_person(username="Alice", viewer=AnonymousUser()) == alice
    with pytest.raises(NotFound, match=r"^No such person\.$"):
        profile_person(username="nobody", viewer=carol)
    deletion.request_deletion(user=alice)
    with pytest.raises(NotFound, match=r"^No such person\.$"):
        profile_person(username="alice", viewer=carol)


@pytest.mark.parametrize(
    ("act", "message"),
    [
        (lambda me: follow(follower=me, followee=me), "You cannot follow yourself."),
        (lambda me: block(user=me, target=me), "You cannot block yourself."),
        (lambda me: mute(user=me, target=me), "You cannot mute yourself."),
    ],
)
def test_nobody_follows_blocks_or_mutes_themselves(alice, act, message):
    with pytest.raises(Invalid) as caught:
        act(alice)
    assert caught.value.message == message
    assert isinstance(caught.value, SelfRelationError)


def test_no_follow_either_way_across_a_block(alice, carol):
    block(user=carol, target=alice)
    for follower, followee in ((alice, carol), (carol, alice)):
        with pytest.raises(Forbidden) as caught:
            follow(follower=follower, followee=followee)
        assert isinstance(caught.value, BlockedError)
        assert caught.value.message == "You cannot follow this account."


def test_a_muted_word_over_the_limit_and_a_file_not_taken_are_invalid(alice, monkeypatch):
    monkeypatch.setattr(muted_words, "MAX_WORDS", 1)
    muted_words.mute_word(user=alice, phrase="spoiler")
    with pytest.raises(Invalid) as caught:
        muted_words.mute_word(user=alice, phrase="another")
    assert caught.value.message == "At most 1 muted words."
    not_text = SimpleUploadedFile("following.csv", b"\xff\xfe\x00 not UTF-8")
    with pytest.raises(Invalid, match="not UTF-8"):
        follow_import.read(not_text)
    with pytest.raises(Invalid, match="not a JPEG"):
        images.first_frame(SimpleUploadedFile("a.jpg", b"no image here"))
