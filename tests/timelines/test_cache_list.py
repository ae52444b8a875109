"""The list cache's scripts against a plain Python model of an inbox: keys newest
first, each once, at most the cap, complete above the oldest (a key pushed below
it is left out; a cache that removals empty is gone); every read as a slice of
that.

Pushes come in any order (fan-outs finish out of order, a follow pushes older
posts), twice (a retried task), and past the cap; reads start at keys that are
in the cache and keys that are not.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posts import ids
from timelines.home import _cache as cache
from timelines.home import _cache_scripts as cache_lua

pytestmark = pytest.mark.django_db

READER = 4242
CAP = 6
KEYS = sorted(
    {
        ids.make_timeline_key(ids.KeyParts(time=1_000 + time, author=author, seq=0))
        for time in range(0, 40, 3)
        for author in (1, 2)
    }
)
# Bounds for reads: the keys themselves, and keys between and beyond them.
BOUNDS = sorted({*KEYS, "0" * 16, "Z" * 16, *(key[:-1] + "1" for key in KEYS)})

keys = st.lists(st.sampled_from(KEYS), max_size=4)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("push"), keys),
        st.tuples(st.just("remove"), keys),
        st.tuples(st.just("remove_author"), st.sampled_from([1, 2])),
        st.tuples(st.just("older"), st.none() | st.sampled_from(BOUNDS), st.integers(0, 8)),
        st.tuples(st.just("newer"), st.sampled_from(BOUNDS), st.integers(0, 8)),
        st.tuples(st.just("count_newer"), st.sampled_from(BOUNDS), st.integers(0, 8)),
    ),
    max_size=12,
)


def _author_of(key: str) -> int:
    return ids.decode_number(key[ids.TIMELINE_KEY_AUTHOR])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filled=st.lists(st.sampled_from(KEYS), max_size=CAP, unique=True), steps=operations)
def test_the_scripts_keep_and_read_an_inbox_as_the_model_does(filled, steps):
    cache.drop(READER)
    inbox = cache.CachedInbox(READER, cache.generation())
    model = sorted(filled, reverse=True)
    assert inbox.finish_fill(inbox.begin_fill(), model)
    for step in steps:
        name, *args = step
        if name == "push":
            cache.push([READER], args[0], cap=CAP)
            model = None if model is None else _pushed(model, args[0])
        elif name == "remove":
            cache.remove([READER], args[0])
            model = _removed(model, [key for key in model or [] if key in args[0]])
        elif name == "remove_author":
            cache.remove_author(READER, args[0])
            model = _removed(model, [key for key in model or [] if _author_of(key) == args[0]])
        elif model is None:  # gone: every read is a miss
            assert getattr(inbox, name)(*args) is None, step
        elif name == "older":
            before, limit = args
            expected = [key for key in model if before is None or key < before][:limit]
            assert inbox.older(before, limit) == expected, step
        elif name == "newer":
            after, limit = args
            above = sorted(key for key in model if key > after)[:limit]
            reached = max((key for key in model if key <= after), default=None)
            assert inbox.newer(after, limit) == (above, reached), step
        else:
            after, most = args
            assert inbox.count_newer(after, most) == min(sum(k > after for k in model), most)
    # The whole list: newest first, once each (None: gone).
    assert inbox.older(None, CAP + 1) == model


def _pushed(model: list[str], keys: list[str]) -> list[str]:
    """The model after a push: oldest first, each key in its place, but none below the
    oldest of a cache that holds some; then the newest CAP."""
    for key in sorted(keys):
        if not model or key > model[-1]:
            model = sorted({*model, key}, reverse=True)
    return model[:CAP]


def test_a_read_loads_its_script_again_when_the_server_forgot_it():
    cache.drop(READER)
    inbox = cache.CachedInbox(READER, cache.generation())
    assert inbox.finish_fill(inbox.begin_fill(), KEYS[::-1])
    inbox.redis.script_flush()  # as a restarted or failed-over server has none

    assert inbox.older(None, 3) == KEYS[::-1][:3]


def test_a_bound_equal_to_the_sentinel_is_above_every_key():
    """The sentinel sorts above no key ('!' is below 0-9A-Z), and is no cursor in the list."""
    cache.drop(READER)
    inbox = cache.CachedInbox(READER, cache.generation())
    assert inbox.finish_fill(inbox.begin_fill(), KEYS[::-1])
    now = cache.sentinel(inbox.redis, READER)

    assert inbox.older(now, 3) == []
    assert inbox.count_newer(now, 100) == len(KEYS)


@settings(max_examples=200, deadline=None)
@given(common=st.binary(max_size=20), one=st.binary(max_size=10), other=st.binary(max_size=10))
def test_the_scripts_order_keys_by_their_bytes(common, one, other):
    """``below``, eight bytes a call, against Python's bytes order: any lengths,
    common prefixes ending on either side of an eight-byte block."""
    a, b = common + one, common + other
    script = cache_lua.INCARNATION + "return below(ARGV[1], ARGV[2]) and 1 or 0"
    assert cache.client().eval(script, 0, a, b) == (a < b)


def _removed(model: list[str] | None, gone: list[str]) -> list[str] | None:
    """The model after removals: a cache they leave with no key is gone (None)."""
    if model is None or not gone:
        return model
    return [key for key in model if key not in gone] or None
