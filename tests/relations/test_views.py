import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from posts.services import create_post
from relations.selectors import is_following
from relations.services import follow
from tests.factories import UserFactory


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def link(response, rel: str) -> str | None:
    found = re.search(rf'<a rel="{rel}" href="([^"]+)"', response.content.decode())
    return found.group(1) if found else None


def publish(author: User, count: int) -> list[str]:
    return [create_post(author=author, text=f"post {n}").pk for n in range(count)]


# --- The profile page -----------------------------------------------------------


def test_profile_shows_counters_bio_and_posts_newest_first(client, alice, bob):
    alice.bio = "Down the <rabbit> hole."
    alice.save(update_fields=["bio"])
    first, second = publish(alice, 2)

    response = client.get("/@alice/")

    assert response.status_code == 200
    content = response.content.decode()
    assert "Down the &lt;rabbit&gt; hole." in content
    assert "<strong>2</strong> posts" in content
    assert "<strong>1</strong> follower<" in content
    assert "<strong>0</strong> following" in content
    assert post_ids(response) == [second, first]
    assert link(response, "next") is None
    assert link(response, "prev") is None


def test_profile_finds_the_username_in_any_case(client, alice):
    response = client.get("/@ALICE/")

    assert response.status_code == 200
    assert response.context["person"] == alice


@pytest.mark.parametrize("path", ["/@nobody/", "/@nobody/followers/", "/@nobody/following/"])
@pytest.mark.django_db
def test_pages_of_an_unknown_username_are_404(client, path):
    assert client.get(path).status_code == 404


@pytest.mark.parametrize(
    "query",
    ["?before=xyz", "?after=xyz", "?before=", f"?before={'0' * 500}", "?before=A&after=B"],
    ids=["malformed", "malformed-after", "empty", "overlong", "both"],
)
def test_profile_with_a_bad_cursor_is_400(client, alice, query):
    response = client.get(f"/@alice/{query}")

    assert response.status_code == 400
    assert b"Bad request" in response.content


def test_profile_pages_through_posts_with_cursor_links(client, alice):
    created = publish(alice, 25)
    newest_first = created[::-1]

    first = client.get("/@alice/")
    assert post_ids(first) == newest_first[:20]
    assert link(first, "prev") is None

    second = client.get("/@alice/" + link(first, "next"))
    assert post_ids(second) == newest_first[20:]
    assert link(second, "next") is None

    back = client.get("/@alice/" + link(second, "prev"))
    assert post_ids(back) == newest_first[:20]


def test_profile_offers_follow_to_a_signed_in_stranger(client, alice, carol):
    client.force_login(carol)

    content = client.get("/@alice/").content.decode()

    assert 'action="/@alice/follow/"' in content
    assert 'action="/@alice/unfollow/"' not in content


def test_profile_offers_unfollow_to_a_follower(client, alice, bob):
    client.force_login(bob)

    content = client.get("/@alice/").content.decode()

    assert 'action="/@alice/unfollow/"' in content
    assert 'action="/@alice/follow/"' not in content


def test_own_profile_offers_edit_not_follow(alice_client):
    content = alice_client.get("/@alice/").content.decode()

    assert "/follow/" not in content
    assert 'href="/accounts/profile/"' in content


def test_profile_offers_no_follow_button_when_signed_out(client, alice):
    assert b"/follow/" not in client.get("/@alice/").content


def test_profile_query_count_does_not_grow_with_the_posts_on_the_page(
    client, alice, carol, django_assert_max_num_queries
):
    client.force_login(carol)
    client.get("/@alice/")  # the first request of a session also records last-active
    counts = []
    for total in (2, 20):
        publish(alice, total - alice.posts_count)
        alice.refresh_from_db()
        # Session, viewer, the name's claim, person (accounts.unique_names), where the viewer
        # stands, posts, liked, reposted, images.
        with CaptureQueriesContext(connection) as queries, django_assert_max_num_queries(9):
            response = client.get("/@alice/")
        assert len(post_ids(response)) == total
        counts.append(len(queries))
    assert counts[0] == counts[1]


# --- Follow and unfollow ----------------------------------------------------------


@pytest.mark.embedded
def test_following_from_the_profile_page_follows_and_counts(
    client, alice, carol, django_capture_on_commit_callbacks
):
    client.force_login(carol)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/@alice/follow/", follow=True)

    assert response.redirect_chain == [("/@alice/", 302)]
    assert "You now follow @alice." in response.content.decode()
    assert is_following(follower_id=carol.pk, followee_id=alice.pk)
    assert User.objects.get(pk=alice.pk).followers_count == 1
    assert User.objects.get(pk=carol.pk).following_count == 1
    assert b'action="/@alice/unfollow/"' in response.content


def test_following_twice_says_so_and_counts_once(client, alice, bob):
    client.force_login(bob)

    response = client.post("/@alice/follow/", follow=True)

    assert "You already follow @alice." in response.content.decode()
    assert User.objects.get(pk=alice.pk).followers_count == 1


def test_following_yourself_is_refused_with_a_message(alice_client, alice):
    response = alice_client.post("/@alice/follow/", follow=True)

    assert response.status_code == 200
    assert response.redirect_chain == [("/@alice/", 302)]
    assert "You cannot follow yourself." in response.content.decode()
    assert User.objects.get(pk=alice.pk).following_count == 0


def test_unfollowing_stops_following(client, alice, bob, django_capture_on_commit_callbacks):
    client.force_login(bob)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/@alice/unfollow/", follow=True)

    assert "You no longer follow @alice." in response.content.decode()
    assert not is_following(follower_id=bob.pk, followee_id=alice.pk)
    assert User.objects.get(pk=alice.pk).followers_count == 0


def test_unfollowing_someone_you_do_not_follow_is_harmless(client, alice, carol):
    client.force_login(carol)

    response = client.post("/@alice/unfollow/", follow=True)

    assert "You did not follow @alice." in response.content.decode()
    assert User.objects.get(pk=alice.pk).followers_count == 0


def test_follow_returns_to_a_safe_next_only(client, alice, carol):
    client.force_login(carol)

    safe = client.post("/@alice/follow/", {"next": "/@alice/followers/"})
    unsafe = client.post("/@alice/unfollow/", {"next": "https://evil.example/"})

    assert safe["Location"] == "/@alice/followers/"
    assert unsafe["Location"] == "/@alice/"


@pytest.mark.parametrize("action", ["follow", "unfollow"])
def test_follow_actions_need_login(client, alice, action):
    response = client.post(f"/@alice/{action}/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert User.objects.get(pk=alice.pk).followers_count == 0


@pytest.mark.parametrize("action", ["follow", "unfollow"])
def test_follow_actions_by_get_are_405(client, alice, carol, action):
    client.force_login(carol)

    assert client.get(f"/@alice/{action}/").status_code == 405
    assert not is_following(follower_id=carol.pk, followee_id=alice.pk)


def test_following_an_unknown_user_is_404(alice_client):
    assert alice_client.post("/@nobody/follow/").status_code == 404


# --- Followers and following lists ---------------------------------------------------


def people(response) -> dict[str, str]:
    """Each listed person's row, by username, in page order."""
    rows = re.findall(r'<li class="person">(.*?)</li>', response.content.decode(), re.S)
    return {re.search(r"@(\w+)<", row).group(1): row for row in rows}


def test_followers_list_marks_who_follows_you_and_who_is_a_friend(client, alice, bob, carol):
    # Bob follows alice (fixture); alice follows bob back; carol follows alice and bob.
    follow(follower=alice, followee=bob)
    follow(follower=carol, followee=alice)
    follow(follower=carol, followee=bob)
    client.force_login(bob)

    response = client.get("/@alice/followers/")

    assert response.status_code == 200
    rows = people(response)
    assert list(rows) == ["carol", "bob"]  # newest follow first
    assert "follows you" in rows["carol"]
    assert "friends" not in rows["carol"]  # bob does not follow carol
    assert "follows you" not in rows["bob"]  # bob is the viewer

    rows = people(client.get("/@bob/followers/"))
    assert list(rows) == ["carol", "alice"]
    assert "follows you" in rows["alice"]
    assert "friends" in rows["alice"]
    assert "friends" not in rows["carol"]


def test_following_list_marks_who_follows_you_and_who_is_a_friend(client, alice, bob, carol):
    follow(follower=alice, followee=carol)
    follow(follower=carol, followee=bob)
    follow(follower=bob, followee=carol)  # bob and carol are friends
    dora = UserFactory(username="dora")
    follow(follower=alice, followee=dora)
    follow(follower=dora, followee=bob)  # dora follows bob, bob does not follow dora
    client.force_login(bob)

    rows = people(client.get("/@alice/following/"))

    assert list(rows) == ["dora", "carol"]  # newest follow first
    assert "follows you" in rows["dora"]
    assert "friends" not in rows["dora"]
    assert "follows you" in rows["carol"]
    assert "friends" in rows["carol"]


def test_follow_lists_show_no_marks_to_visitors(client, alice, bob):
    follow(follower=alice, followee=bob)

    rows = people(client.get("/@alice/followers/"))

    assert list(rows) == ["bob"]
    assert 'class="mark' not in rows["bob"]


def test_followers_list_pages_with_cursor_links(client, alice):
    followers = UserFactory.create_batch(25)
    for follower in followers:
        follow(follower=follower, followee=alice)
    newest_first = [f"@{user.username}<" for user in reversed(followers)]

    def names(response) -> list[str]:
        return re.findall(r"@user\d+<", response.content.decode())

    first = client.get("/@alice/followers/")
    assert names(first) == newest_first[:20]
    second = client.get("/@alice/followers/" + link(first, "next"))
    assert names(second) == newest_first[20:]
    back = client.get("/@alice/followers/" + link(second, "prev"))
    assert names(back) == newest_first[:20]


@pytest.mark.parametrize("which", ["followers", "following"])
@pytest.mark.parametrize(
    "query",
    [
        "?before=xyz",
        "?after=1_2_3",
        f"?before={'9' * 400}_1",
        f"?before=1_{'9' * 5000}",
        "?before=1_1&after=xyz",
    ],
    ids=["malformed", "three-parts", "huge-time", "overlong", "one-end-of-two"],
)
def test_follow_lists_with_a_bad_cursor_are_400(client, alice, which, query):
    assert client.get(f"/@alice/{which}/{query}").status_code == 400
