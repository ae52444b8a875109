"""Status ids are timeline keys written as decimal numbers: both ways without a
lookup, in the keys' order, and a malformed one refused, never a 500."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from posts import ids
from posts.ids import MAX_AUTHOR, MAX_SEQ, MAX_TIME, InvalidKey, KeyParts

pytestmark = pytest.mark.embedded

authors = st.one_of(st.integers(0, MAX_AUTHOR), st.sampled_from([0, 1, 35, 36, MAX_AUTHOR]))
times = st.one_of(st.integers(0, MAX_TIME), st.sampled_from([0, 1, 35, 36, MAX_TIME]))
seqs = st.one_of(st.integers(0, MAX_SEQ), st.sampled_from([0, 1, MAX_SEQ]))
parts = st.builds(KeyParts, time=times, author=authors, seq=seqs)


def mastodon_order(status_id: str) -> tuple[int, str]:
    """How Mastodon's clients compare ids: by length, then as text."""
    return len(status_id), status_id


@given(parts)
def test_a_key_and_its_status_id_convert_both_ways(key_parts):
    key = ids.make_timeline_key(key_parts)
    status_id = ids.decimal_of_key(key)
    assert status_id.isdigit() and (status_id == "0" or not status_id.startswith("0"))
    assert ids.key_of_decimal(status_id) == key


@given(parts, parts)
def test_status_ids_sort_as_their_keys_do(a, b):
    left, right = ids.make_timeline_key(a), ids.make_timeline_key(b)
    assert (
        mastodon_order(ids.decimal_of_key(left)) < mastodon_order(ids.decimal_of_key(right))
    ) == (left < right)


@pytest.mark.parametrize(
    "text",
    ["", "-1", "+5", "1.5", "1e9", "12a", " 12", "١٢", str(36**16), "9" * 26, None, 12],
)
def test_anything_but_a_number_a_key_holds_is_refused(text):
    with pytest.raises(InvalidKey):
        ids.key_of_decimal(text)


def test_the_largest_key_is_the_largest_status_id():
    assert ids.key_of_decimal(str(36**16 - 1)) == ids.HIGHEST_KEY
    assert ids.key_of_decimal("0") == ids.LOWEST_KEY


@given(parts, authors, st.lists(st.tuples(times, seqs), max_size=8))
def test_author_bounds_cut_an_authors_posts_where_the_key_cuts_the_timeline(at, author, posts):
    key = ids.make_timeline_key(at)
    below, above = ids.author_bound_below(key, author), ids.author_bound_above(key, author)
    # Their posts near the key's millisecond, where the bounds could go wrong.
    near = [(at.time + d, s) for d in (-1, 0, 1) for s in (0, at.seq, MAX_SEQ)]
    for time, seq in [*posts, *near]:
        if not 0 <= time <= MAX_TIME:
            continue
        post = KeyParts(time=time, author=author, seq=seq)
        post_id, post_key = ids.make_post_id(post), ids.make_timeline_key(post)
        assert (post_id < below) == (post_key < key)
        assert (post_id > above) == (post_key > key)
