from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posts import ids
from posts.ids import MAX_AUTHOR, MAX_SEQ, MAX_TIME, InvalidKey, KeyParts
from posts.models import Post
from posts.services import create_post
from tests.factories import UserFactory

# Edges of each field are where an off-by-one or a carry would show.
authors = st.one_of(st.integers(0, MAX_AUTHOR), st.sampled_from([0, 9, 10, 35, 36, MAX_AUTHOR]))
times = st.one_of(st.integers(0, MAX_TIME), st.sampled_from([0, 35, 36, MAX_TIME]))
seqs = st.one_of(st.integers(0, MAX_SEQ), st.sampled_from([0, 35, 36, MAX_SEQ]))
parts = st.builds(KeyParts, time=times, author=authors, seq=seqs)
well_formed = st.text(alphabet=ids.ALPHABET, min_size=ids.KEY_LENGTH, max_size=ids.KEY_LENGTH)
malformed = st.one_of(
    st.text(alphabet=ids.ALPHABET).filter(lambda s: len(s) != ids.KEY_LENGTH),
    # The right length with at least one character outside 0-9A-Z: lowercase, NUL,
    # punctuation next to the alphabet in ASCII, non-ASCII digits and letters.
    st.tuples(
        st.text(alphabet=ids.ALPHABET, min_size=ids.KEY_LENGTH - 1, max_size=ids.KEY_LENGTH - 1),
        st.one_of(
            st.sampled_from(["a", "z", "\x00", ":", "@", "[", "/", " ", "٣", "É"]),
            st.characters().filter(lambda c: c not in ids.ALPHABET),
        ),
        st.integers(0, ids.KEY_LENGTH - 1),
    ).map(lambda t: t[0][: t[2]] + t[1] + t[0][t[2] :]),
)


@given(parts, parts)
def test_post_id_byte_order_is_the_order_of_author_time_seq(a, b):
    left, right = ids.make_post_id(a).encode("ascii"), ids.make_post_id(b).encode("ascii")
    assert (left < right) == ((a.author, a.time, a.seq) < (b.author, b.time, b.seq))
    assert (left == right) == (a == b)


@given(parts, parts)
def test_timeline_key_byte_order_is_the_order_of_time_author_seq(a, b):
    left, right = ids.make_timeline_key(a).encode("ascii"), ids.make_timeline_key(b).encode("ascii")
    assert (left < right) == ((a.time, a.author, a.seq) < (b.time, b.author, b.seq))
    assert (left < right) == (a < b)  # KeyParts orders the way timeline keys do


@given(parts)
def test_parts_survive_a_round_trip_through_both_forms(p):
    assert ids.parse_post_id(ids.make_post_id(p)) == p
    assert ids.parse_timeline_key(ids.make_timeline_key(p)) == p


@given(well_formed)
def test_any_well_formed_string_survives_a_round_trip_through_both_forms(text):
    assert ids.make_post_id(ids.parse_post_id(text)) == text
    assert ids.make_timeline_key(ids.parse_timeline_key(text)) == text


@given(parts)
def test_post_id_and_timeline_key_convert_into_each_other_without_a_lookup(p):
    post_id, key = ids.make_post_id(p), ids.make_timeline_key(p)
    assert ids.post_id_to_timeline_key(post_id) == key
    assert ids.timeline_key_to_post_id(key) == post_id
    assert ids.author_of_timeline_key(key) == p.author
    assert ids.post_id_range(p.author)[0] == post_id[: ids.AUTHOR_WIDTH]


@given(malformed)
def test_malformed_keys_raise_invalid_key(text):
    for parse in (ids.parse_post_id, ids.parse_timeline_key):
        with pytest.raises(InvalidKey):
            parse(text)


@pytest.mark.parametrize("value", [None, 12, b"0000010QLTZ1SS00", ["0" * 16]])
def test_keys_that_are_not_strings_raise_invalid_key(value):
    with pytest.raises(InvalidKey):
        ids.parse_post_id(value)
    assert not ids.is_timeline_key(value)


@given(malformed)
def test_converting_a_malformed_key_raises_invalid_key(text):
    for convert in (ids.post_id_to_timeline_key, ids.timeline_key_to_post_id):
        with pytest.raises(InvalidKey):
            convert(text)


@given(well_formed)
def test_is_timeline_key_accepts_every_well_formed_key(text):
    assert ids.is_timeline_key(text)


@given(malformed)
def test_is_timeline_key_rejects_wrong_length_alphabet_lowercase_and_nul(text):
    assert not ids.is_timeline_key(text)


@pytest.mark.parametrize(
    "text", ["", "0" * 15, "0" * 17, "0000010qltz1ss00", "0000010QLTZ1SS0\x00", "0000010QLTZ1SS0-"]
)
def test_is_timeline_key_rejects_these_examples(text):
    assert not ids.is_timeline_key(text)


@given(
    author=authors,
    start=st.builds(KeyParts, time=st.integers(0, MAX_TIME - 10_000), author=st.just(0), seq=seqs),
    steps=st.lists(st.integers(-3, 3), max_size=60),
    seq_near_the_end=st.booleans(),
)
def test_next_post_id_strictly_increases_whatever_the_clock_does(
    author, start, steps, seq_near_the_end
):
    """Clock readings step back, stand still or move on; ids never repeat or go down."""
    seq = MAX_SEQ - 2 if seq_near_the_end else start.seq
    last = ids.make_post_id(KeyParts(time=start.time, author=author, seq=seq))
    clock = start.time
    seen = {last}
    for step in steps:
        clock = max(0, clock + step)
        post_id = ids.next_post_id(author_id=author, now=ids.moment_of(clock), last_post_id=last)
        assert post_id > last
        assert post_id not in seen
        assert ids.parse_post_id(post_id).author == author
        seen.add(post_id)
        last = post_id


def test_a_full_tick_borrows_the_next_millisecond():
    tick = ids.time_of(datetime(2026, 3, 1, tzinfo=UTC))
    now = ids.moment_of(tick)
    last = None
    made = []
    for _ in range(MAX_SEQ + 3):
        last = ids.next_post_id(author_id=7, now=now, last_post_id=last)
        made.append(ids.parse_post_id(last))
    assert made == sorted(set(made))
    assert made[MAX_SEQ] == KeyParts(time=tick, author=7, seq=MAX_SEQ)
    assert made[MAX_SEQ + 1] == KeyParts(time=tick + 1, author=7, seq=0)


def test_a_clock_outside_the_key_space_is_refused():
    with pytest.raises(ValueError):
        ids.next_post_id(author_id=1, now=ids.EPOCH - timedelta(days=1), last_post_id=None)
    with pytest.raises(ValueError):
        ids.next_post_id(author_id=1, now=ids.moment_of(MAX_TIME + 1), last_post_id=None)


@given(author=authors, other=parts)
def test_post_id_range_holds_exactly_that_authors_ids(author, other):
    low, high = ids.post_id_range(author)
    neighbours = [other.author, author, max(0, author - 1), min(MAX_AUTHOR, author + 1)]
    for candidate in neighbours:
        post_id = ids.make_post_id(KeyParts(time=other.time, author=candidate, seq=other.seq))
        assert (low <= post_id < high) == (candidate == author)


# --- In the database ------------------------------------------------------------------


def test_two_posts_in_the_same_tick_get_distinct_increasing_ids(alice):
    frozen = datetime(2026, 5, 4, 12, 0, 0, 123000, tzinfo=UTC)
    with mock.patch("posts.services.timezone.now", return_value=frozen):
        first = create_post(author=alice, text="one")
        second = create_post(author=alice, text="two")
        third = create_post(author=alice, text="three")
    assert first.pk < second.pk < third.pk
    assert [ids.parse_post_id(p.pk).seq for p in (first, second, third)] == [0, 1, 2]
    assert {p.created_at for p in (first, second, third)} == {frozen}
    assert second.timeline_key == ids.post_id_to_timeline_key(second.pk)


def test_a_post_after_the_clock_went_back_still_sorts_last(alice):
    later = datetime(2026, 5, 4, 12, 0, 0, tzinfo=UTC)
    with mock.patch("posts.services.timezone.now", return_value=later):
        first = create_post(author=alice, text="first")
    with mock.patch("posts.services.timezone.now", return_value=later - timedelta(seconds=5)):
        second = create_post(author=alice, text="second")
    assert first.pk < second.pk
    assert list(Post.objects.by_author(alice.pk).order_by("pk")) == [first, second]


@pytest.fixture
def authors_at_carries(db):
    """Authors whose prefixes end in "Z", "10" and "ZZ": where a carry would show."""
    return [UserFactory(pk=pk) for pk in (35, 36, 1295)]


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key_parts=st.lists(st.builds(KeyParts, time=times, author=st.just(0), seq=seqs), max_size=40)
)
def test_the_database_orders_ids_and_timeline_keys_like_python(authors_at_carries, key_parts):
    Post.objects.all().delete()
    for n, p in enumerate(key_parts):
        author = authors_at_carries[n % 3]
        real = KeyParts(time=p.time, author=author.pk, seq=p.seq)
        # One INSERT per row: see test_bulk_created_posts_keep_their_whole_ids.
        Post.objects.get_or_create(
            id=ids.make_post_id(real),
            defaults={"timeline_key": ids.make_timeline_key(real), "author": author, "text": ""},
        )
    stored = list(Post.objects.values_list("pk", "timeline_key"))
    by_pk = list(Post.objects.order_by("pk").values_list("pk", flat=True))
    by_key = list(Post.objects.order_by("timeline_key").values_list("timeline_key", flat=True))
    assert by_pk == sorted(pk for pk, _ in stored)
    assert by_key == sorted(key for _, key in stored)
    for author in authors_at_carries:
        mine = [pk for pk in by_pk if ids.parse_post_id(pk).author == author.pk]
        ranged = Post.objects.by_author(author.pk).order_by("pk").values_list("pk", flat=True)
        assert list(ranged) == mine


def test_bulk_created_posts_keep_their_whole_ids(alice):
    made = [KeyParts(time=1000, author=alice.pk, seq=seq) for seq in range(3)]
    Post.objects.bulk_create(
        Post(id=ids.make_post_id(p), timeline_key=ids.make_timeline_key(p), author=alice, text="")
        for p in made
    )
    assert sorted(Post.objects.values_list("pk", "timeline_key")) == [
        (ids.make_post_id(p), ids.make_timeline_key(p)) for p in made
    ]


@pytest.mark.django_db
def test_key_columns_use_the_c_collation_on_postgresql():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, collation_name FROM information_schema.columns"
            " WHERE table_name = 'posts_post' AND column_name IN ('id', 'timeline_key')"
        )
        assert dict(cursor.fetchall()) == {"id": "C", "timeline_key": "C"}


@given(
    st.lists(authors, min_size=1, max_size=5),
    st.one_of(st.none(), times),
    st.one_of(st.none(), times),
    parts,
)
def test_post_id_windows_hold_exactly_the_ids_of_each_author_in_the_time_window(
    author_ids, since, until, p
):
    lows, highs = ids.post_id_windows(author_ids, since=since, until=until)
    for author_id, low, high in zip(author_ids, lows, highs, strict=True):
        post_id = ids.make_post_id(KeyParts(time=p.time, author=author_id, seq=p.seq))
        inside = (since is None or p.time >= since) and (until is None or p.time < until)
        assert (low <= post_id < high) == inside
        other = ids.make_post_id(p)  # another author's id at the same time is never inside
        if p.author != author_id:
            assert not low <= other < high


@given(st.lists(parts, max_size=5))
def test_stored_keys_turn_into_the_post_ids_the_checked_form_gives(many):
    keys = [ids.make_timeline_key(p) for p in many]
    assert ids.stored_keys_to_post_ids(keys) == [ids.timeline_key_to_post_id(k) for k in keys]
