import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from feed_project.pagination import Page
from posts.models import Post
from posts.services import create_post, delete_post
from timelines.home import FeedItem
from timelines.home import _held_posts as held
from timelines.home import _state as opening


def post_ids(response_or_html) -> list[str]:
    html = getattr(response_or_html, "content", response_or_html)
    if isinstance(html, bytes):
        html = html.decode()
    return re.findall(r'data-post-id="([0-9A-Z]+)"', html)


def link(response, rel: str) -> str | None:
    found = re.search(rf'<a rel="{rel}" href="([^"]+)"', response.content.decode())
    return found.group(1) if found else None


@pytest.fixture
def publish(django_capture_on_commit_callbacks):
    """Post through the service and run its on-commit fan-out, as a real commit would."""

    def publish(author, count: int = 1, text: str = "post") -> list[str]:
        with django_capture_on_commit_callbacks(execute=True):
            return [create_post(author=author, text=f"{text} {n}").pk for n in range(count)]

    return publish


@pytest.mark.django_db
def test_visitors_get_a_welcome_page_with_signup_and_login_links(client):
    response = client.get("/")

    assert response.status_code == 200
    content = response.content.decode()
    assert 'href="/accounts/signup/"' in content
    assert 'href="/accounts/login/"' in content
    assert "data-post-id" not in content
    assert 'action="/posts/new/"' not in content


@pytest.mark.embedded
def test_home_shows_a_compose_box_and_posts_by_you_and_people_you_follow(
    client, alice, bob, carol, publish
):
    [by_alice] = publish(alice, text="from alice")
    [by_bob] = publish(bob, text="from bob")
    publish(carol, text="from carol")
    client.force_login(bob)

    response = client.get("/")

    assert response.status_code == 200
    content = response.content.decode()
    assert (
        '<form class="compose" method="post" action="/posts/new/" '
        'enctype="multipart/form-data" data-compose data-inplace data-inplace-into="#feed">'
    ) in content
    assert 'name="text"' in content
    assert post_ids(response) == [by_bob, by_alice]
    assert "from carol" not in content


@pytest.mark.embedded
def test_home_merges_in_the_posts_of_a_big_account_you_follow(
    client, alice, bob, publish, settings
):
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 1  # one follower makes a big account
    [by_bob] = publish(bob, text="from bob")
    [by_alice] = publish(alice, text="from alice, pulled at read time")
    client.force_login(bob)

    assert opening.open_built(bob.pk, following=1).pulled == [alice.pk]
    assert post_ids(client.get("/")) == [by_alice, by_bob]


def test_home_shows_author_name_username_link_and_time(client, alice, bob, publish):
    [post_id] = publish(alice)
    client.force_login(bob)

    content = client.get("/").content.decode()

    article = re.search(r"<article.*?</article>", content, re.S).group(0)
    assert f'<article class="post" data-post-id="{post_id}" data-visibility="public">' in article
    assert "<strong>Alice</strong>" in article
    assert 'href="/@alice/"' in article
    assert "@alice" in article
    assert "<time datetime=" in article
    assert "/delete/" not in article  # bob is not the author


def test_home_offers_delete_on_your_own_posts(alice_client, alice, publish):
    [post_id] = publish(alice)

    content = alice_client.get("/").content.decode()

    assert f'action="/posts/{post_id}/delete/"' in content
    assert '<input type="hidden" name="next" value="/">' in content


def test_home_drops_a_deleted_post_at_once(client, alice, bob, publish):
    [kept, deleted] = publish(alice, 2)
    delete_post(post=Post.objects.get(pk=deleted))
    client.force_login(bob)

    assert post_ids(client.get("/")) == [kept]


def test_home_with_nothing_to_show_says_so(alice_client):
    response = alice_client.get("/")

    assert response.status_code == 200
    assert b"Nothing here yet" in response.content
    assert link(response, "next") is None
    assert link(response, "prev") is None


@pytest.mark.parametrize(
    "query",
    [
        "?before=xyz",
        "?after=xyz",
        "?before=",
        f"?before={'0' * 17}",
        f"?before={'0' * 5000}",
        "?before=0000000000000000&after=000000000000000!",
    ],
    ids=["malformed", "malformed-after", "empty", "one-too-long", "overlong", "one-end-of-two"],
)
def test_home_with_a_bad_cursor_is_400(alice_client, query):
    response = alice_client.get(f"/{query}")

    assert response.status_code == 400
    assert b"Bad request" in response.content


def test_home_pages_through_the_feed_with_cursor_links(client, alice, bob, publish):
    created = publish(alice, 25)
    newest_first = created[::-1]
    client.force_login(bob)

    first = client.get("/")
    assert post_ids(first) == newest_first[:20]
    assert link(first, "prev") is None
    assert link(first, "next").startswith("?before=")

    second = client.get("/" + link(first, "next"))
    assert second.status_code == 200
    assert post_ids(second) == newest_first[20:]
    assert link(second, "next") is None
    assert link(second, "prev").startswith("?after=")

    back = client.get("/" + link(second, "prev"))
    assert post_ids(back) == newest_first[:20]


def test_home_query_count_does_not_grow_with_the_posts_on_the_page(
    client, alice, bob, publish, django_assert_max_num_queries
):
    client.force_login(bob)
    client.get("/")  # the first visit records last-active and may build the inbox
    counts = []
    # Half by the reader, half by someone they follow: the authors must come with the posts.
    for total, more_each in ((2, 1), (20, 9)):
        publish(alice, more_each)
        publish(bob, more_each)
        held.clear()  # a process's first page: its posts read (held), one query
        with CaptureQueriesContext(connection) as queries, django_assert_max_num_queries(13):
            response = client.get("/")
        counts.append(len(queries))
        assert len(post_ids(response)) == total
    assert counts[0] == counts[1]


def test_home_shows_the_feeds_notices(alice_client, alice, monkeypatch):
    page = Page(items=[], notices=["Some posts from big accounts could not be loaded."])
    monkeypatch.setattr("timelines.views.home_feed", lambda **kwargs: page)

    content = alice_client.get("/").content.decode()

    assert '<ul class="notices">' in content
    assert "Some posts from big accounts could not be loaded." in content


def test_home_shows_who_reposted_an_item(alice_client, alice, bob, carol, monkeypatch):
    post = create_post(author=carol, text="worth sharing")
    item = FeedItem(key=post.timeline_key, post=post, reposted_by=[bob, alice])
    monkeypatch.setattr("timelines.views.home_feed", lambda **kwargs: Page(items=[item]))

    content = alice_client.get("/").content.decode()

    assert post_ids(content) == [post.pk]
    assert re.search(
        r"Reposted by\s*<a href=\"/@bob/\">Bob</a>, <a href=\"/@alice/\">Alice", content
    )
