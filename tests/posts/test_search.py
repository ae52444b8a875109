import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.models import Post
from posts.search import full_text_query, normalize_query, search
from posts.services import create_post, delete_post
from relations.models import Block
from tests.factories import UserFactory

SEARCH = "/search/"


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def found_texts(query: str, viewer=None) -> list[str]:
    results = search(query=normalize_query(query), viewer=viewer, cursor=Cursor())
    return [post.text for post in results.posts.items]


def block(user, blocked) -> None:
    Block.objects.create(user=user, blocked=blocked, created_at=timezone.now())


@pytest.mark.embedded
def test_search_finds_english_posts_by_a_word_of_their_text(alice, carol):
    create_post(author=alice, text="Fresh coffee on the ferry this morning")
    create_post(author=carol, text="Rain all day")

    assert found_texts("coffee") == ["Fresh coffee on the ferry this morning"]
    assert found_texts("COFFEE ferry") == ["Fresh coffee on the ferry this morning"]
    assert found_texts("tea") == []


@pytest.mark.embedded
@pytest.mark.parametrize("query", ["天气", "北京", "天气很好", "好", "北京的天气"])
def test_search_finds_chinese_posts_written_without_spaces(alice, query):
    create_post(author=alice, text="今天北京的天气很好\N{FULLWIDTH COMMA}我们去公园吧。")
    create_post(author=alice, text="上海下雨了")

    assert found_texts(query) == ["今天北京的天气很好\N{FULLWIDTH COMMA}我们去公园吧。"]


def test_search_on_postgresql_stems_english_words(alice):
    create_post(author=alice, text="I went running before work")

    assert found_texts("runs") == ["I went running before work"]


def test_search_on_postgresql_does_not_match_chinese_characters_out_of_order(alice):
    create_post(author=alice, text="天气很好")

    assert found_texts("好很") == []
    assert found_texts("气很") == ["天气很好"]


def test_search_on_postgresql_finds_mixed_english_and_chinese_queries(alice):
    create_post(author=alice, text="新的iPhone发布了 release day")
    create_post(author=alice, text="release day")

    assert found_texts("release 发布") == ["新的iPhone发布了 release day"]


def test_full_text_query_has_nothing_to_look_for_in_punctuation_alone():
    assert full_text_query("") is None
    assert full_text_query("   ") is None


@pytest.mark.embedded
def test_search_finds_people_by_username_and_display_name(db):
    wang = UserFactory(username="wang_lei", display_name="王磊")
    UserFactory(username="someone", display_name="Someone Else")

    for query in ("wang", "LEI", "王", "王磊"):
        results = search(query=query, viewer=None, cursor=Cursor())
        assert results.people == [wang], query


@pytest.mark.embedded
def test_search_never_shows_hidden_deleted_or_repost_posts(alice, carol):
    kept = create_post(author=alice, text="needle kept")
    hidden = create_post(author=alice, text="needle hidden")
    Post.objects.filter(pk=hidden.pk).update(hidden_at=timezone.now(), hidden_reason="moderator")
    delete_post(post=create_post(author=alice, text="needle deleted"))
    repost = create_post(author=carol, text="needle repost")
    Post.objects.filter(pk=repost.pk).update(repost_of=kept)

    assert found_texts("needle") == ["needle kept"]


@pytest.mark.embedded
def test_search_hides_posts_and_people_blocked_in_either_direction(alice, carol):
    dave = UserFactory(username="dave_needle", display_name="Dave")
    create_post(author=carol, text="needle by carol")
    create_post(author=dave, text="needle by dave")
    block(alice, carol)  # alice blocked carol
    block(dave, alice)  # dave blocked alice

    results = search(query="needle", viewer=alice, cursor=Cursor())

    assert [post.text for post in results.posts.items] == []
    assert results.people == []
    assert found_texts("needle") == ["needle by dave", "needle by carol"]  # signed out


@pytest.mark.embedded
def test_search_page_lists_posts_newest_first_and_pages_back_with_the_query_kept(
    client, alice, settings
):
    settings.FEED_PAGE_SIZE = 3
    posts = [create_post(author=alice, text=f"needle {n}") for n in range(5)]
    create_post(author=alice, text="haystack")

    first = client.get(SEARCH, {"q": "needle"})
    older = re.search(r'<a rel="next" href="([^"]+)"', first.content.decode()).group(1)
    second = client.get(SEARCH + older.replace("&amp;", "&"))
    newer = re.search(r'<a rel="prev" href="([^"]+)"', second.content.decode()).group(1)
    back = client.get(SEARCH + newer.replace("&amp;", "&"))

    newest_first = [post.pk for post in reversed(posts)]
    assert first.status_code == second.status_code == back.status_code == 200
    assert post_ids(first) == newest_first[:3]
    assert post_ids(second) == newest_first[3:]
    assert 'rel="next"' not in second.content.decode()
    assert post_ids(back) == newest_first[:3]


@pytest.mark.embedded
@pytest.mark.parametrize(
    "params",
    [
        {"before": "nonsense"},
        {"after": "x" * 16},
        {"before": "0" * 15},
        {"before": "A", "after": "B"},
    ],
    ids=["word", "lowercase", "short", "both"],
)
def test_search_page_answers_a_malformed_cursor_with_400(client, db, params):
    assert client.get(SEARCH, {"q": "needle", **params}).status_code == 400


@pytest.mark.embedded
def test_search_page_refuses_a_query_over_200_characters(client, db):
    assert client.get(SEARCH, {"q": "x" * 201}).status_code == 400
    assert client.get(SEARCH, {"q": "x" * 200}).status_code == 200


@pytest.mark.embedded
def test_search_page_without_a_query_shows_the_form_and_runs_no_query(client, db):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(SEARCH, {"q": "   "})

    assert response.status_code == 200
    assert b'name="q"' in response.content
    assert post_ids(response) == []
    assert len(queries) == 0


@pytest.mark.embedded
@pytest.mark.parametrize(
    "query", ["a\x00b", "<script>alert(1)</script>", "' OR 1=1 --", "!!!", "&|<->:*"]
)
def test_search_page_survives_hostile_queries(client, alice, query):
    create_post(author=alice, text="<script>alert(1)</script>")

    response = client.get(SEARCH, {"q": query})

    assert response.status_code == 200
    assert b"<script>alert(1)</script>" not in response.content


@pytest.mark.embedded
@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
def test_search_page_costs_the_same_queries_for_2_and_20_results(client, alice, signed_in):
    authors = UserFactory.create_batch(20)
    if signed_in:
        client.force_login(alice)
        client.get(SEARCH)  # last-active is written on the first request only
    counts = {}
    for n in (2, 20):
        for author in authors[:n]:
            create_post(author=author, text=f"needle{n} for you")
        with CaptureQueriesContext(connection) as queries:
            response = client.get(SEARCH, {"q": f"needle{n}"})
        assert len(post_ids(response)) == n
        counts[n] = len(queries)

    assert counts[2] == counts[20]
    if not signed_in:
        assert counts[2] == 4  # people, posts, their authors, their images
