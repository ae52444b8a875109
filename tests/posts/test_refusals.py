"""What the posts' selectors and services refuse, asked directly (no view): the refusal's
type, which decides the status every front door answers, and the message it carries."""

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.core.exceptions import PermissionDenied
from django.http import Http404

from feed_project.refusals import Forbidden, Invalid, NotFound
from posts import edits, selectors, services
from posts.models import Post
from posts.moderation import services as moderation
from posts.search import MAX_QUERY_LENGTH, checked_query
from posts.services import create_post
from relations.services import block
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NO_SUCH_POST = "No such post."


@pytest.fixture
def moderator(db):
    user = UserFactory(username="mod", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="moderate"))
    return user


def refused(kind: type, call, *args, **kwargs) -> str:
    """The message of the ``kind`` refusal the call raises."""
    with pytest.raises(kind) as caught:
        call(*args, **kwargs)
    return caught.value.message


def test_a_post_that_is_gone_hidden_or_no_post_is_not_found(alice, carol, moderator):
    deleted = create_post(author=alice, text="gone")
    services.delete_post(post=deleted)
    hidden = create_post(author=alice, text="hidden")
    moderation.hide_post(moderator=moderator, post=hidden)
    for post_id in (deleted.pk, hidden.pk, "nonsense", "0" * 16):
        message = refused(NotFound, selectors.visible_post, viewer_id=carol.pk, post_id=post_id)
        assert message == NO_SUCH_POST


def test_a_post_the_viewer_may_not_see_is_not_found_not_forbidden(alice, bob, carol):
    private = create_post(author=alice, text="for followers", visibility="followers")
    assert selectors.visible_post(viewer_id=bob.pk, post_id=private.pk) == private
    assert refused(NotFound, selectors.visible_post, viewer_id=carol.pk, post_id=private.pk)
    assert refused(NotFound, selectors.visible_post, viewer_id=None, post_id=private.pk)
    public = create_post(author=alice, text="for anyone")
    block(user=alice, target=carol)
    message = refused(NotFound, selectors.visible_post, viewer_id=carol.pk, post_id=public.pk)
    assert message == NO_SUCH_POST


def test_the_missing_message_is_the_callers(alice, carol):
    post = create_post(author=alice, text="mine", visibility="followers")
    message = refused(
        NotFound, selectors.visible_post, viewer_id=carol.pk, post_id=post.pk, missing="No image."
    )
    assert message == "No image."


def test_an_action_acts_on_a_repost_s_original_if_the_viewer_may_see_it(alice, bob, carol):
    original = create_post(author=alice, text="original")
    shared = services.repost(user=bob, post=original)
    assert selectors.original_to_act_on(viewer_id=carol.pk, post_id=shared.pk) == original
    block(user=alice, target=carol)
    message = refused(NotFound, selectors.original_to_act_on, viewer_id=carol.pk, post_id=shared.pk)
    assert message == NO_SUCH_POST
    services.delete_post(post=original)
    message = refused(NotFound, selectors.original_to_act_on, viewer_id=bob.pk, post_id=shared.pk)
    assert message == NO_SUCH_POST


def test_a_post_one_may_not_see_cannot_be_quoted(alice, carol):
    private = create_post(author=alice, text="for followers", visibility="followers")
    message = refused(NotFound, services.quotable, viewer_id=carol.pk, post_id=private.pk)
    assert message == "This post cannot be quoted: it is not there, or not for you."
    assert refused(NotFound, services.quotable, viewer_id=carol.pk, post_id="nonsense")


def test_only_public_and_unlisted_posts_can_be_quoted(alice, bob):
    private = create_post(author=alice, text="for followers", visibility="followers")
    message = refused(Forbidden, services.quotable, viewer_id=bob.pk, post_id=private.pk)
    assert message == "Only public and unlisted posts can be quoted."
    unlisted = create_post(author=alice, text="quiet", visibility="unlisted")
    shared = services.repost(user=bob, post=unlisted)
    assert services.quotable(viewer_id=bob.pk, post_id=shared.pk) == unlisted


def test_only_public_and_unlisted_posts_can_be_reposted(alice, bob):
    private = create_post(author=alice, text="for followers", visibility="followers")
    message = refused(services.NotShareable, services.repost, user=bob, post=private)
    assert message == "Only public and unlisted posts can be reposted or quoted."
    assert refused(Forbidden, services.shareable, private) == message
    assert not Post.objects.filter(repost_of=private).exists()


def test_only_the_author_can_delete_a_post(alice, bob):
    post = create_post(author=alice, text="mine")
    message = refused(Forbidden, services.delete_own_post, user=bob, post_id=post.pk)
    assert message == "Only the author can delete a post."
    assert services.delete_own_post(user=alice, post_id=post.pk) == post
    message = refused(NotFound, services.delete_own_post, user=alice, post_id=post.pk)
    assert message == NO_SUCH_POST


def test_only_the_author_edits_and_a_repost_has_nothing_to_edit(alice, bob, carol):
    post = create_post(author=alice, text="mine")
    assert edits.editable_post(user_id=alice.pk, post_id=post.pk) == post
    forbidden = "Only the author can edit a post, and a repost has nothing to edit."
    assert refused(Forbidden, edits.editable_post, user_id=bob.pk, post_id=post.pk) == forbidden
    shared = services.repost(user=bob, post=post)
    assert refused(Forbidden, edits.editable_post, user_id=bob.pk, post_id=shared.pk) == forbidden
    private = create_post(author=alice, text="for followers", visibility="followers")
    message = refused(NotFound, edits.editable_post, user_id=carol.pk, post_id=private.pk)
    assert message == NO_SUCH_POST


def test_a_repost_or_a_post_one_may_not_see_has_no_history(alice, bob, carol):
    post = create_post(author=alice, text="mine")
    assert edits.post_with_history(viewer_id=None, post_id=post.pk) == post
    shared = services.repost(user=bob, post=post)
    message = refused(NotFound, edits.post_with_history, viewer_id=bob.pk, post_id=shared.pk)
    assert message == NO_SUCH_POST
    private = create_post(author=alice, text="for followers", visibility="followers")
    assert refused(NotFound, edits.post_with_history, viewer_id=carol.pk, post_id=private.pk)


def test_a_moderator_opens_a_hidden_post_and_no_one_else(alice, carol, moderator):
    post = create_post(author=alice, text="hidden")
    moderation.hide_post(moderator=moderator, post=post)
    assert moderation.post_to_open(user=moderator, post_id=post.pk) == post
    for user in (carol, alice, AnonymousUser()):
        message = refused(
            NotFound, moderation.post_to_open, user=user, post_id=post.pk, missing="No such image."
        )
        assert message == "No such image."
    services.delete_post(post=post)
    assert refused(NotFound, moderation.post_to_open, user=moderator, post_id=post.pk)


def test_a_report_of_a_post_one_may_not_see_or_of_ones_own(alice, bob, carol):
    private = create_post(author=alice, text="for followers", visibility="followers")
    message = refused(NotFound, moderation.reportable_post, reporter=carol, post_id=private.pk)
    assert message == NO_SUCH_POST
    assert moderation.reportable_post(reporter=bob, post_id=private.pk) == private
    message = refused(Invalid, moderation.reportable_post, reporter=alice, post_id=private.pk)
    assert message == "You cannot report your own post."


def test_a_report_of_no_one_of_the_inactive_of_the_blocked_or_of_oneself(alice, carol):
    for name in ("nobody", "not a name"):
        message = refused(NotFound, moderation.reportable_person, reporter=alice, username=name)
        assert message == "No such person."
    assert moderation.reportable_person(reporter=alice, username="CAROL") == carol
    message = refused(Invalid, moderation.reportable_person, reporter=alice, username="alice")
    assert message == "You cannot report yourself."
    block(user=carol, target=alice)
    assert refused(NotFound, moderation.reportable_person, reporter=alice, username="carol")
    UserFactory(username="gone", is_active=False)  # suspended
    assert refused(NotFound, moderation.reportable_person, reporter=alice, username="gone")


def test_a_search_longer_than_the_limit_is_refused_not_trimmed():
    assert checked_query("  two\x00words ") == "two words"
    message = refused(Invalid, checked_query, "x" * (MAX_QUERY_LENGTH + 1))
    assert message == f"A search is at most {MAX_QUERY_LENGTH} characters."


def test_refusals_are_the_exceptions_django_answers():
    assert isinstance(NotFound("x"), Http404)
    assert isinstance(Forbidden("x"), PermissionDenied)
    assert isinstance(services.NotShareable(), PermissionDenied)
