"""The home-feed rule in its three dialects (the reference's Q, the entries statement's SQL,
the checks over a standing read first) picks the same posts, over any posts, reposts,
deletions, hides, follows, mutes and blocks."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posts import ids, visibility
from posts.models import Post, Visibility
from relations import muted_words as muted_words_module
from relations import visibility as relations_visibility
from relations.models import Block, Followee, Mute, MutedWord
from tests.factories import UserFactory

PEOPLE = 3
TEXTS = ["", "hello world", "Hello, World!", "othello", "你好世界", "so true", "hell yes"]
PHRASES = ["hello", "hell", "world", "世界", "so true", "true"]
pairs = st.sets(
    st.tuples(st.integers(0, PEOPLE - 1), st.integers(0, PEOPLE - 1)).filter(lambda p: p[0] != p[1])
)
# A post: its author, the earlier post it reposts (if any), deleted, hidden, its
# level, and whom a direct post addresses.
posts = st.lists(
    st.tuples(
        st.integers(0, PEOPLE - 1),
        st.none() | st.integers(0, 10),
        st.booleans(),
        st.booleans(),
        st.sampled_from(Visibility.values),
        st.sets(st.integers(0, PEOPLE - 1)),
        st.sampled_from(TEXTS),
    ),
    max_size=8,
)
# Muted words: who mutes which phrase, and whether it has expired.
muted_words = st.sets(
    st.tuples(st.integers(0, PEOPLE - 1), st.sampled_from(PHRASES), st.booleans()), max_size=4
)


# The ORM and SQL dialects join a post to its original: plain PostgreSQL's. A
# cluster takes the routed form, which tests/timelines/test_feed_rules.py runs there.
pytestmark = pytest.mark.plain_postgresql


@pytest.fixture
def people(db) -> list[int]:
    return [UserFactory().pk for _ in range(PEOPLE)]


def by_sql(where: str, viewer_id: int, alias: str = "p") -> set[str]:
    table = Post._meta.db_table
    with connection.cursor() as db:
        db.execute(
            f"SELECT {alias}.id FROM {table} {alias} LEFT JOIN {table} o"
            f" ON o.id = {alias}.repost_of_id WHERE {where}",
            {"viewer": viewer_id, "now": timezone.now()},
        )
        return {row[0] for row in db.fetchall()}


EXAMPLES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@EXAMPLES
@given(
    drawn=posts,
    blocks=pairs,
    follows=pairs,
    hidden_reposts=pairs,
    mutes=pairs,
    words=muted_words,
    viewer=st.integers(0, PEOPLE - 1),
)
def test_the_feed_rule_picks_the_same_posts_in_every_dialect(
    people, drawn, blocks, follows, hidden_reposts, mutes, words, viewer
):
    for model in (Post, Block, Followee, Mute, MutedWord):
        model.objects.all().delete()
    now = timezone.now()
    originals: list[str] = []
    live_reposts: set[tuple[int, str]] = set()  # one live repost per author and original
    for n, (author, repost_of, deleted, hidden, level, addressed, text) in enumerate(drawn):
        post_id = ids.make_post_id(ids.KeyParts(time=n, author=people[author], seq=0))
        original = originals[repost_of % len(originals)] if originals and repost_of else None
        if original is not None and not deleted:
            if (author, original) in live_reposts:
                original = None
            else:
                live_reposts.add((author, original))
        Post.objects.create(
            id=post_id,
            timeline_key=ids.post_id_to_timeline_key(post_id),
            author_id=people[author],
            repost_of_id=original,
            deleted_at=now if deleted else None,
            hidden_at=now if hidden else None,
            visibility=level,
            recipients=visibility.recipients_field(
                people[p] for p in addressed if p != author and level == Visibility.DIRECT
            ),
            text="" if original else text,
        )
        if original is None:
            originals.append(post_id)
    for model, field, drawn_pairs in (
        (Block, "blocked_id", blocks),
        (Followee, "followee_id", follows),
        (Mute, "muted_id", mutes),
    ):
        model.objects.bulk_create(
            model(user_id=people[a], created_at=now, **{field: people[b]}) for a, b in drawn_pairs
        )
    Followee.objects.filter(
        user_id__in=[people[a] for a, _ in hidden_reposts], hide_reposts=False
    ).update(hide_reposts=True)
    MutedWord.objects.bulk_create(
        MutedWord(
            user_id=people[who],
            phrase=phrase,
            pattern=muted_words_module.pattern_of(phrase),
            created_at=now,
            expires_at=now - timedelta(days=1) if expired else None,
        )
        for who, phrase, expired in {(w, p): (w, p, e) for w, p, e in words}.values()
    )
    me = people[viewer]

    in_feed = set(Post.objects.filter(visibility.in_home_feed(me)).values_list("pk", flat=True))
    assert in_feed == by_sql(visibility.sql_in_home_feed("p", "o"), me)
    shown_reposts = set(
        Post.objects.filter(visibility.reposts_shown_to(me)).values_list("pk", flat=True)
    )
    assert shown_reposts == by_sql(visibility.sql_shown_repost_of("p"), me)

    everyone = Post.objects.select_related("repost_of")
    standing = relations_visibility.standing(me, blocks_among=people)
    assert in_feed == {
        post.pk
        for post in everyone
        if visibility.shown_in_home_feed(standing, post, post.repost_of)
    }
    assert shown_reposts == {
        post.pk for post in everyone if visibility.is_shown_repost(standing, post)
    }


@EXAMPLES
@given(
    drawn=posts,
    follows=pairs,
    blocks=pairs,
    viewer=st.none() | st.integers(0, PEOPLE - 1),
)
def test_the_level_rule_picks_the_same_posts_in_every_dialect(
    people, drawn, follows, blocks, viewer
):
    """Who may read a post by its level (profile, thread, notifications, detail): the ORM's
    ``readable_by``, the Python ``level_allows`` and ``readable_among``, and the plain rule;
    with blocks either way too, the ORM's ``readable``, the SQL ``sql_readable`` and
    ``may_see``."""
    for model in (Post, Followee, Block):
        model.objects.all().delete()
    now = timezone.now()
    for n, (author, _, _, _, level, addressed, _) in enumerate(drawn):
        post_id = ids.make_post_id(ids.KeyParts(time=n, author=people[author], seq=0))
        Post.objects.create(
            id=post_id,
            timeline_key=ids.post_id_to_timeline_key(post_id),
            author_id=people[author],
            visibility=level,
            recipients=visibility.recipients_field(
                people[p] for p in addressed if p != author and level == Visibility.DIRECT
            ),
        )
    Followee.objects.bulk_create(
        Followee(user_id=people[a], followee_id=people[b], created_at=now) for a, b in follows
    )
    Block.objects.bulk_create(
        Block(user_id=people[a], blocked_id=people[b], created_at=now) for a, b in blocks
    )
    me = None if viewer is None else people[viewer]
    followed = {people[b] for a, b in follows if me == people[a]}
    blocked_either_way = {people[b] for a, b in blocks if me == people[a]} | {
        people[a] for a, b in blocks if me == people[b]
    }

    def plainly(post: Post) -> bool:
        if post.visibility in ("public", "unlisted"):
            return True
        if me is None:
            return False
        if post.visibility == "followers":
            return me == post.author_id or post.author_id in followed
        return me == post.author_id or me in post.recipient_ids

    everyone = list(Post.objects.all())
    expected = {post.pk for post in everyone if plainly(post)}
    by_orm = set(Post.objects.filter(visibility.readable_by(me)).values_list("pk", flat=True))
    assert by_orm == expected
    assert {
        post.pk
        for post in everyone
        if visibility.level_allows(me, post, follows_author=post.author_id in followed)
    } == expected
    if me is not None:
        assert set(visibility.readable_among(me, {p.pk: p for p in everyone})) == expected
    readable = {
        post.pk
        for post in everyone
        if post.pk in expected
        and (me == post.author_id or post.author_id not in blocked_either_way)
    }
    assert set(visibility.readable(Post.objects.all(), me).values_list("pk", flat=True)) == readable
    assert by_sql(visibility.sql_readable("p", me), me) == readable
    assert {post.pk for post in everyone if visibility.may_see(me, post)} == readable


def test_every_dialect_drops_muted_words_hidden_reposts_and_others_direct_posts(people):
    """One history with each case of the levels and the reader's filters, against the
    answer written out (hypothesis may draw such a case rarely)."""
    reader, friend, other = people
    now = timezone.now()
    made = {}

    def post(name: str, author: int, n: int, **fields) -> None:
        post_id = ids.make_post_id(ids.KeyParts(time=n, author=author, seq=0))
        made[name] = Post.objects.create(
            id=post_id,
            timeline_key=ids.post_id_to_timeline_key(post_id),
            author_id=author,
            **fields,
        )

    post("own muted", reader, 1, text="Hello there")
    post("friend fine", friend, 2, text="othello")
    post("friend cjk muted", friend, 3, text="你好世界")
    post("friend direct to other", friend, 4, visibility="direct", recipients=f" {other} ")
    post("friend direct to reader", friend, 5, visibility="direct", recipients=f" {reader} ")
    post("friend followers", friend, 6, visibility="followers", text="for followers")
    post("other original", other, 7, text="a repost of this")
    post("friend repost", friend, 8, repost_of_id=made["other original"].pk)
    post("friend warning muted", friend, 9, text="fine", spoiler_text="Hello, spoilers")
    post("other warned", other, 10, text="fine too", spoiler_text="世界 news")
    post("friend repost of warned", friend, 11, repost_of_id=made["other warned"].pk)
    Followee.objects.create(user_id=reader, followee_id=friend, created_at=now)
    for phrase in ("hello", "世界"):
        MutedWord.objects.create(
            user_id=reader,
            phrase=phrase,
            pattern=muted_words_module.pattern_of(phrase),
            created_at=now,
        )
    expected = {
        made[name].pk
        for name in ("friend fine", "friend direct to reader", "friend followers", "friend repost")
    }

    def dialects() -> list[set[str]]:
        standing = relations_visibility.standing(reader, blocks_among=people)
        everyone = Post.objects.select_related("repost_of")
        return [
            set(Post.objects.filter(visibility.in_home_feed(reader)).values_list("pk", flat=True)),
            by_sql(visibility.sql_in_home_feed("p", "o"), reader),
            {p.pk for p in everyone if visibility.shown_in_home_feed(standing, p, p.repost_of)},
        ]

    assert dialects() == [expected] * 3
    Followee.objects.filter(user_id=reader).update(hide_reposts=True)
    assert dialects() == [expected - {made["friend repost"].pk}] * 3
