"""Muted words: whole words, CJK substrings, expiry; home, threads, notifications, search."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.services import create_post
from relations import muted_words
from relations.models import MutedWord
from relations.services import follow
from tests.factories import UserFactory
from timelines.home import home_feed
from timelines.home.pull_model import pull_reference_keys

pytestmark = pytest.mark.django_db(transaction=True)


def post_ids(html: str) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', html)


@pytest.mark.parametrize(
    ("phrase", "text", "muted"),
    [
        ("hello", "Hello, world!", True),
        ("hello", "othello said hello", True),
        ("hell", "hello there", False),
        ("hell", "what the hell.", True),
        ("so true", "that is SO   TRUE", False),  # runs of space are not one space in text
        ("so true", "so true!", True),
        ("世界", "你好世界", True),
        ("世界", "世 界", False),
        ("c++", "I like c++ a lot", True),
        ("a.b", "axb", False),
    ],
)
def test_a_phrase_matches_whole_words_and_cjk_anywhere(phrase, text, muted):
    pattern = muted_words.pattern_of(muted_words.normalize(phrase))
    assert muted_words.matches(pattern, text) is muted


@pytest.fixture
def reader_and_author(db):
    now = timezone.now()
    reader = UserFactory(username="reader", last_active_at=now)
    author = UserFactory(username="author", last_active_at=now)
    home_feed(reader=reader, cursor=Cursor())
    follow(follower=reader, followee=author)
    return reader, author


def test_a_muted_word_leaves_the_feed_at_once_and_pages_still_fill(reader_and_author, settings):
    reader, author = reader_and_author
    kept = [create_post(author=author, text=f"fine post {n}") for n in range(5)]
    for n in range(30):
        create_post(author=author, text=f"spoilers {n} ahead")
    home_feed(reader=reader, cursor=Cursor())  # the cache is warm

    muted_words.mute_word(user=reader, phrase="Spoilers")

    page = home_feed(reader=reader, cursor=Cursor(), limit=5)
    assert [item.post.pk for item in page.items] == [post.pk for post in reversed(kept)]
    keys = pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=5)
    assert [item.key for item in page.items] == keys


def test_an_expired_word_mutes_nothing(reader_and_author):
    reader, author = reader_and_author
    post = create_post(author=author, text="spoilers")
    word = muted_words.mute_word(user=reader, phrase="spoilers", expires_in_days=1)
    assert home_feed(reader=reader, cursor=Cursor()).items == []
    MutedWord.objects.filter(pk=word.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert [item.post.pk for item in home_feed(reader=reader, cursor=Cursor()).items] == [post.pk]


def test_threads_notifications_and_search_leave_out_muted_words(reader_and_author):
    reader, author = reader_and_author
    root = create_post(author=reader, text="a question")
    fine = create_post(author=author, text="@reader a fine answer", in_reply_to=root)
    spoiled = create_post(author=author, text="@reader the butler did it", in_reply_to=root)
    client = Client()
    client.force_login(reader)
    before = client.get(f"/posts/{root.pk}/").content.decode()
    assert spoiled.pk in post_ids(before)

    client.post("/settings/muted-words/", {"word": "butler"})

    assert post_ids(client.get(f"/posts/{root.pk}/").content.decode()) == [root.pk, fine.pk]
    notes = client.get("/notifications/").content.decode()
    assert "a fine answer" in notes
    assert "butler" not in notes
    search = client.get("/search/?q=answer+butler").content.decode()
    assert spoiled.pk not in post_ids(search)
    assert post_ids(Client().get("/search/?q=butler").content.decode()) == [spoiled.pk]


def test_notifications_stay_full_past_notifications_of_muted_posts(reader_and_author):
    reader, author = reader_and_author
    for n in range(3):
        create_post(author=author, text=f"@reader fine {n}")
    for n in range(40):
        create_post(author=author, text=f"@reader muted thing {n}")
    muted_words.mute_word(user=reader, phrase="muted thing")
    client = Client()
    client.force_login(reader)

    html = client.get("/notifications/").content.decode()

    assert html.count("data-notification-id=") == 3


def test_the_settings_page_adds_lists_and_deletes_words(reader_and_author):
    reader, _ = reader_and_author
    client = Client()
    client.force_login(reader)

    assert client.post("/settings/muted-words/", {"word": "  Big   News "}).status_code == 302
    client.post("/settings/muted-words/", {"word": "世界", "expires_in_days": "7"})
    assert client.post("/settings/muted-words/", {"word": "   "}).status_code == 400
    bad_days = {"word": "x", "expires_in_days": "0"}
    assert client.post("/settings/muted-words/", bad_days).status_code == 400

    html = client.get("/settings/muted-words/").content.decode()
    assert 'data-muted-word="big news"' in html
    assert 'data-muted-word="世界"' in html
    word = MutedWord.objects.get(user=reader, phrase="big news")
    other = UserFactory(username="other")
    foreign = muted_words.mute_word(user=other, phrase="mine")

    assert client.post(f"/settings/muted-words/{foreign.pk}/delete/").status_code == 302
    assert MutedWord.objects.filter(pk=foreign.pk).exists()  # not reader's to delete
    assert client.post(f"/settings/muted-words/{word.pk}/delete/").status_code == 302
    assert not MutedWord.objects.filter(pk=word.pk).exists()
