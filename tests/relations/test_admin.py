"""The user admin's follow graph: the newest followers and followees, newest first."""

import re

import pytest

from relations.services import follow
from tests.factories import UserFactory


@pytest.mark.django_db
def test_the_user_page_lists_the_newest_followers_and_followees_newest_first(admin_client):
    star = UserFactory(username="star")
    fans = [UserFactory(username=f"fan{n}") for n in range(3)]
    for fan in fans:
        follow(follower=fan, followee=star)
    follow(follower=star, followee=fans[1])

    page = admin_client.get(f"/admin/accounts/user/{star.pk}/change/").content.decode()

    followers = page[page.index("newest") :]
    assert re.findall(r">(fan\d)</a>", followers)[:4] == ["fan2", "fan1", "fan0", "fan1"]
