"""Every page that shows posts, for every kind of viewer: no post shown to someone who
may not see it, and every post shown to whoever may (so the walk cannot pass empty).

The author posts at every level, each post's text carrying a token of its own;
replies at every level answer a public post. A page "shows" a post when its
token is anywhere in the HTML (an article, a notification's excerpt, a quote).
"""

import pytest
from django.test import Client
from django.urls import reverse

from posts.models import Post, Visibility
from posts.services import create_post
from relations.services import block, follow
from tests.factories import UserFactory
from timelines.conversations.models import Conversation

pytestmark = pytest.mark.django_db

VIEWERS = ("author", "follower", "stranger", "mentioned", "blocked", None)


def may_read(viewer: str | None, level: str) -> bool:
    """The rule, plainly: who may read a post of the author's at each level."""
    if viewer == "blocked":
        return False
    if level in ("public", "unlisted"):
        return True
    if level == "followers":
        return viewer in ("author", "follower")
    return viewer in ("author", "mentioned")


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    """Delivered as the site does (fan-out, notifications), on commit."""
    with django_capture_on_commit_callbacks(execute=True):
        return _world()


def _world():
    people = {name: UserFactory(username=name) for name in VIEWERS if name}
    follow(follower=people["follower"], followee=people["author"])
    follow(follower=people["blocked"], followee=people["author"])
    block(user=people["author"], target=people["blocked"])
    author = people["author"]
    # The mentioned person is mentioned in every post (notifications), the
    # stranger too; only the direct posts address them (the mentioned one).
    posts: dict[str, tuple[str, Post]] = {}
    root = create_post(author=author, text="root #levels words tok-root")
    posts["tok-root"] = ("public", root)
    for level in Visibility.values:
        token = f"tok-{level}"
        mention = "@mentioned" if level == "direct" else "@mentioned @stranger"
        text = f"{mention} #levels words {token}"
        posts[token] = (level, create_post(author=author, text=text, visibility=level))
        reply_token = f"tok-reply-{level}"
        reply = create_post(
            author=author,
            text=f"{mention} words {reply_token}",
            in_reply_to=root,
            visibility=level,
        )
        posts[reply_token] = (level, reply)
    return people, posts


def pages(people, posts) -> list[str]:
    """Every page that shows posts (home and its newer-posts fetch, profile, detail and
    thread, edit history, search, tag, public timeline, notifications, private
    messages and every conversation anyone has), for the author's posts."""
    conversations = Conversation.objects.values_list("key", flat=True).distinct()
    return [
        "/",
        f"/?after={'0' * 16}",  # what new-posts.js fetches to insert new posts
        "/@author/",
        "/search/?q=words",
        "/tags/levels/",
        "/public/",
        "/notifications/",
        "/messages/",
        *(reverse("timelines:conversation", args=[key]) for key in conversations),
        *(reverse("posts:detail", args=[post.pk]) for _, post in posts.values()),
        *(reverse("posts:history", args=[post.pk]) for _, post in posts.values()),
    ]


@pytest.mark.parametrize("viewer", VIEWERS)
def test_no_page_shows_a_post_to_someone_who_may_not_see_it(world, viewer):
    people, posts = world
    client = Client()
    if viewer:
        client.force_login(people[viewer])
    seen: set[str] = set()
    for path in pages(people, posts):
        response = client.get(path)
        if response.status_code in (302, 404):
            continue  # signed out at home or notifications; a detail page you may not see
        assert response.status_code == 200, path
        html = response.content.decode()
        for token, (level, _) in posts.items():
            if token in html:
                assert may_read(viewer, level), (viewer, path, token)
                seen.add(token)
    readable = {token for token, (level, _) in posts.items() if may_read(viewer, level)}
    assert seen == readable


@pytest.mark.parametrize("viewer", VIEWERS)
def test_an_in_place_action_on_a_post_you_may_not_see_shows_nothing_of_it(world, viewer):
    """The fragments site.js swaps in (POST with X-Fragment): a like or a repost of a
    post you may not see is a 404 (signed out, the log-in page), never its HTML."""
    people, posts = world
    client = Client()
    if viewer:
        client.force_login(people[viewer])
    for token, (level, post) in posts.items():
        for action in ("posts:like", "posts:repost"):
            response = client.post(reverse(action, args=[post.pk]), HTTP_X_FRAGMENT="1")
            if not may_read(viewer, level):
                assert response.status_code in (302, 404), (viewer, action, token)
                assert token not in response.content.decode(), (viewer, action, token)


@pytest.mark.parametrize("viewer", VIEWERS)
def test_a_post_you_may_not_see_is_a_404_and_one_you_may_is_a_200(world, viewer):
    people, posts = world
    client = Client()
    if viewer:
        client.force_login(people[viewer])
    for level, post in posts.values():
        response = client.get(reverse("posts:detail", args=[post.pk]))
        assert response.status_code == (200 if may_read(viewer, level) else 404), (viewer, level)


def test_search_and_tag_pages_list_public_posts_only(world):
    people, _ = world
    client = Client()
    client.force_login(people["follower"])
    for path in ("/search/?q=words", "/tags/levels/"):
        html = client.get(path).content.decode()
        assert "tok-public" in html
        assert "tok-unlisted" not in html
        assert "tok-followers" not in html


def test_a_mention_in_a_post_you_may_not_see_notifies_you_of_nothing(world):
    people, _ = world
    client = Client()
    client.force_login(people["stranger"])
    html = client.get("/notifications/").content.decode()
    assert "tok-public" in html
    assert "tok-followers" not in html
    assert "tok-reply-followers" not in html
