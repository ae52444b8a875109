"""Posts a process holds for the feed (timelines.home._held_posts): never stale, only missing.

Each write below goes around the services (a queryset update, as a migration, a
moderator's tool or a future code path might): the row's version moves all the
same, so the next page reads the row again.
"""

import re

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from feed_project import sharding
from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post, repost
from relations.services import block, follow
from tests.factories import UserFactory
from tests.timelines.shared_posts import state
from timelines.home import _held_posts as held
from timelines.home import home_feed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reader_and_author(settings):
    """A reader following an author. Posts are held where the database allows (the
    pages below must show the rows as they stand in every form)."""
    settings.FEED_HELD_POSTS = 100
    reader, author = UserFactory(last_active_at=timezone.now()), UserFactory(display_name="A")
    home_feed(reader=reader, cursor=Cursor())  # kept from now on
    follow(follower=reader, followee=author)
    return reader, author


def first(reader) -> Post:
    return home_feed(reader=reader, cursor=Cursor()).items[0].post


@pytest.fixture
def holding(reader_and_author):
    """For the tests of the holding itself, marked ``plain_postgresql``: SQLite has no
    row versions and Citus reads posts routed, so there is nothing held to look at
    (the test below says where that is right)."""
    assert held.enabled()
    return reader_and_author


def test_it_is_on_for_plain_postgresql_only():
    assert held.enabled() == (
        connection.vendor == "postgresql" and not sharding.on_citus(connection)
    )


@pytest.mark.plain_postgresql
def test_a_page_of_held_posts_reads_versions_only(holding):
    reader, author = holding
    create_post(author=author, text="hello")
    first(reader)  # read and held

    with CaptureQueriesContext(connection) as queries:
        assert first(reader).text == "hello"

    statements = [q["sql"] for q in queries.captured_queries]
    assert not any("p.like_count" in sql for sql in statements), statements


@pytest.mark.parametrize(
    "write",
    [
        lambda post, author: Post.objects.filter(pk=post.pk).update(text="edited"),
        lambda post, author: Post.objects.filter(pk=post.pk).update(like_count=F("like_count") + 1),
        lambda post, author: User.objects.filter(pk=author.pk).update(display_name="B"),
        lambda post, author: Post.objects.filter(pk=post.pk).update(hidden_at=timezone.now()),
    ],
    ids=["text", "a count", "the author's name", "hidden by a moderator"],
)
def test_a_write_by_any_path_is_seen_on_the_next_page(reader_and_author, write):
    reader, author = reader_and_author
    post = create_post(author=author, text="hello")
    first(reader)  # read and held

    write(post, author)

    page = home_feed(reader=reader, cursor=Cursor()).items
    post.refresh_from_db()
    author.refresh_from_db()
    if post.hidden_at is not None:
        assert page == []
    else:
        shown = page[0].post
        assert (shown.text, shown.like_count, shown.author.display_name) == (
            post.text,
            post.like_count,
            author.display_name,
        )


def test_a_repost_is_read_again_when_its_original_changes(reader_and_author):
    reader, author = reader_and_author
    stranger = UserFactory()
    original = create_post(author=stranger, text="first words")
    repost(user=author, post=original)
    assert first(reader).text == "first words"

    Post.objects.filter(pk=original.pk).update(text="second words")

    assert first(reader).text == "second words"


def _quoted(html: str, quote: Post) -> str:
    found = re.search(
        rf'data-post-id="{quote.pk}".*?<div class="post-quote"[^>]*>(.*?)</div>', html, re.S
    )
    assert found, html
    return found.group(1)


@pytest.mark.plain_postgresql
def test_readers_share_held_posts_and_no_page_changes_them(holding, client):
    """A feed's posts are one object for every reader: a page keeps what is its
    reader's (here, a quote of someone who blocked one of them) beside them."""
    reader, author = holding
    other = UserFactory(last_active_at=timezone.now())
    follow(follower=other, followee=author)
    quoted_author, stranger = UserFactory(), UserFactory()
    block(user=quoted_author, target=other)
    quote = create_post(
        author=author,
        text="look",
        quote_of=create_post(author=quoted_author, text="the quoted words"),
    )
    repost(user=author, post=create_post(author=stranger, text="reposted"))
    create_post(
        author=author, text="answer", in_reply_to=create_post(author=stranger, text="asked")
    )
    posts = [item.post for item in home_feed(reader=reader, cursor=Cursor()).items]
    before = [state(post) for post in posts]

    pages = {}
    for person in (reader, other, reader, other):
        client.force_login(person)
        pages[person.pk] = client.get("/").content.decode()

    shared = [item.post for item in home_feed(reader=other, cursor=Cursor()).items]
    assert [id(post) for post in shared] == [id(post) for post in posts]
    assert [state(post) for post in posts] == before
    assert "the quoted words" in _quoted(pages[reader.pk], quote)
    assert "post unavailable" in _quoted(pages[other.pk], quote)


@pytest.mark.plain_postgresql
def test_it_holds_at_most_feed_held_posts(holding, settings):
    reader, author = holding
    settings.FEED_HELD_POSTS = 2
    for n in range(3):
        create_post(author=author, text=f"post {n}")
    first(reader)
    home_feed(reader=reader, cursor=Cursor())

    with CaptureQueriesContext(connection) as queries:
        page = home_feed(reader=reader, cursor=Cursor()).items

    assert [item.post.text for item in page] == ["post 2", "post 1", "post 0"]
    # Three posts do not fit in two places: each page reads what it was evicted.
    assert any("p.like_count" in q["sql"] for q in queries.captured_queries)
