"""The people a relation page or a profile names: refused as not found, asked directly."""

import pytest
from django.contrib.auth.models import AnonymousUser

from accounts import deletion
from feed_project.refusals import NotFound
from relations.selectors import person_named, profile_person

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
