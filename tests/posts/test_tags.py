"""Hashtags: parsing, the tag index, the tag page, trending tags, search by #tag."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from feed_project import sharding
from posts import tags
from posts.content_models import PostTag, TrendingTag
from posts.edits import edit_post
from posts.models import Post
from posts.moderation.services import hide_post
from posts.services import create_post, delete_post
from posts.tasks import compute_trending
from relations.services import block
from tests.factories import UserFactory


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


def stored_tags(post: Post) -> set[str]:
    return set(PostTag.objects.filter(post_id=post.pk).values_list("tag", flat=True))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#Django and #django", ["django"]),
        ("#话题#今天很好", ["话题"]),
        ("#微博 #Ελληνικά #snake_case", ["微博", "ελληνικά", "snake_case"]),
        ("#हिन्दी and #ภาษาไทย, marks and all", ["हिन्दी", "ภาษาไทย"]),
        ("#", []),
        ("# alone, and ## too", []),
        ("#123 is a number, #2024年 is not", ["2024年"]),
        ("C# and mail#x and https://x.y/#frag", []),
        ("#" + "a" * 500, []),
        ("#" + "a" * 100, ["a" * 100]),
        ("&#39; is an entity", []),
    ],
)
def test_hashtags_are_letters_digits_and_underscores_of_any_script(text, expected):
    assert tags.hashtags(text) == expected


@pytest.mark.embedded
def test_a_post_s_tags_are_stored_normalized_and_follow_edits_and_deletes(alice):
    post = create_post(author=alice, text="#Django #话题# day")
    assert stored_tags(post) == {"django", "话题"}

    edit_post(post=post, changes={"text": "now #Python only"})
    assert stored_tags(post) == {"python"}

    delete_post(post=post)
    assert stored_tags(post) == set()


@pytest.mark.embedded
def test_the_tag_page_lists_visible_posts_newest_first_with_cursor_pages(
    client, alice, carol, settings
):
    settings.FEED_PAGE_SIZE = 3
    posts = [create_post(author=alice if n % 2 else carol, text=f"#Cats {n}") for n in range(7)]
    create_post(author=alice, text="no tag here")
    # Newest first by timeline key: two authors' posts made in the same millisecond
    # order by author, not by which was made first.
    newest_first = [p.pk for p in sorted(posts, key=lambda p: p.timeline_key, reverse=True)]

    first = client.get("/tags/cats/")
    assert first.status_code == 200
    assert post_ids(first) == newest_first[:3]
    older = re.search(r'<a rel="next" href="([^"]+)"', first.content.decode()).group(1)
    second = client.get("/tags/cats/" + older.replace("&amp;", "&"))
    assert post_ids(second) == newest_first[3:6]


@pytest.mark.embedded
def test_the_tag_page_leaves_out_deleted_hidden_and_blocked_posts(client, alice, carol):
    shown = create_post(author=alice, text="#news one")
    gone = create_post(author=alice, text="#news two")
    hidden = create_post(author=alice, text="#news three")
    create_post(author=carol, text="#news four")  # by someone the viewer blocks
    delete_post(post=gone)
    hide_post(moderator=None, post=hidden)
    viewer = UserFactory(username="dora")
    block(user=viewer, target=carol)
    client.force_login(viewer)

    assert post_ids(client.get("/tags/news/")) == [shown.pk]


@pytest.mark.embedded
@pytest.mark.parametrize(
    "path", ["/tags/%23/", "/tags/" + "a" * 500 + "/", "/tags/a-b/", "/tags/123/"]
)
def test_a_tag_page_for_what_is_no_tag_is_a_404(client, db, path):
    assert client.get(path).status_code == 404


@pytest.mark.embedded
def test_a_tag_page_address_is_lower_cased(client, alice):
    create_post(author=alice, text="#Django")

    response = client.get("/tags/Django/")

    assert response.status_code == 302 and response["Location"] == "/tags/django/"
    assert client.get("/tags/%E8%AF%9D%E9%A2%98/").status_code == 200


def test_the_tag_page_costs_the_same_queries_however_many_tagged_posts_it_shows(
    client, alice, carol
):
    client.force_login(carol)
    client.get("/tags/same/")  # the first visit records last-active
    counts = []
    for total in (1, 20):
        while Post.objects.count() < total:
            create_post(author=alice, text="#same #other #third a post")
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/tags/same/")
        assert len(post_ids(response)) == total
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_tag_page_is_a_range_scan_of_the_index_led_by_the_tag(alice):
    create_post(author=alice, text="#plan")
    rows = PostTag.objects.filter(tag="plan").order_by("-timeline_key")[:21]
    with connection.cursor() as db:
        db.execute("SET LOCAL enable_seqscan = off")
        sql, params = rows.query.sql_with_params()
        db.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in db.fetchall())
    assert "post_tag_page_idx" in plan, plan
    if not sharding.on_citus(connection):
        # On Citus the coordinator merges each shard's 21 rows (each an index scan).
        assert "Sort" not in plan, plan


def test_trending_counts_distinct_authors_of_the_last_day(alice, carol):
    others = [UserFactory() for _ in range(3)]
    for author in others:
        create_post(author=author, text="#popular")
    for _ in range(5):
        create_post(author=alice, text="#spammy")  # five posts, one author
    create_post(author=carol, text="#spammy #popular")
    deleted = create_post(author=alice, text="#ghost")
    delete_post(post=deleted)

    compute_trending.delay()

    assert [(t.tag, t.authors) for t in TrendingTag.objects.order_by("rank")] == [
        ("popular", 4),
        ("spammy", 2),
    ]
    # A day later the same posts are old news.
    assert tags.compute_trending(now=timezone.now() + timedelta(hours=25)) == []
    assert TrendingTag.objects.count() == 0


@pytest.mark.embedded
def test_trending_tags_show_at_tags_and_on_the_home_sidebar_from_the_table(
    client, alice_client, alice
):
    create_post(author=alice, text="#rising")
    assert "#rising" not in client.get("/tags/").content.decode()  # not computed yet

    tags.compute_trending()

    assert 'href="/tags/rising/">#rising</a>' in client.get("/tags/").content.decode()
    assert 'href="/tags/rising/">#rising</a>' in alice_client.get("/").content.decode()


def test_search_understands_hashtags(client, alice):
    tagged = create_post(author=alice, text="morning #coffee")
    create_post(author=alice, text="coffee without the tag")
    both = create_post(author=alice, text="#coffee and cake")

    def found(q):
        return post_ids(client.get("/search/", {"q": q}))

    assert found("#coffee") == [both.pk, tagged.pk]
    assert found("#Coffee cake") == [both.pk]
    assert client.get("/search/", {"q": "#"}).status_code == 200
    assert client.get("/search/", {"q": "#" + "x" * 150}).status_code == 200


def test_a_post_without_a_tag_or_a_mention_costs_no_statement_of_either(alice):
    with CaptureQueriesContext(connection) as queries:
        create_post(author=alice, text="plain words, no tag")
    assert not [q["sql"] for q in queries if "posttag" in q["sql"] or "LOWER(" in q["sql"]]
