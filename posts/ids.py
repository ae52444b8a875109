"""Prefix-encoded post ids and timeline keys (seed 000).

Both are 16 characters of the alphabet 0-9A-Z, whose ASCII byte order is its
numeric order, so comparing two ids as strings (PostgreSQL "C" collation,
SQLite BINARY, the byte comparison of the cache scripts) compares the numbers
they encode.

    post id        AUTHOR(6) TIME(8) SEQ(2)   one author's posts are one key range
    timeline key   TIME(8) AUTHOR(6) SEQ(2)   every post in global time order

Bit budget:
- AUTHOR: 36**6 = 2,176,782,336 user ids.
- TIME: milliseconds since 2025-01-01 UTC; 36**8 ms = 2,821,109,907,456 ms,
  about 89 years, so until the year 2114.
- SEQ: 36**2 = 1,296 posts by one author in one millisecond.

Edges (see ``next_post_id``): a post gets the later of the clock and the
author's newest post; the same tick takes the next sequence number; a full
sequence borrows the next millisecond. Ids of one author therefore strictly
increase whatever the clock does, so two posts never share an id.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
BASE = len(ALPHABET)
AUTHOR_WIDTH = 6
TIME_WIDTH = 8
SEQ_WIDTH = 2
KEY_LENGTH = AUTHOR_WIDTH + TIME_WIDTH + SEQ_WIDTH

# Where the author sits in each form: post ids lead with it, timeline keys
# carry it after the time. Nothing outside this module slices a key by hand.
POST_ID_AUTHOR = slice(0, AUTHOR_WIDTH)
TIMELINE_KEY_AUTHOR = slice(TIME_WIDTH, TIME_WIDTH + AUTHOR_WIDTH)
# The PostgreSQL column type of both forms (posts.fields.KeyField), for SQL
# that casts parameters to it.
SQL_TYPE = f"char({KEY_LENGTH})"

MAX_AUTHOR = BASE**AUTHOR_WIDTH - 1
MAX_TIME = BASE**TIME_WIDTH - 1
MAX_SEQ = BASE**SEQ_WIDTH - 1

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

_DIGITS = {char: value for value, char in enumerate(ALPHABET)}


class InvalidKey(ValueError):
    """A string that is not a well-formed post id or timeline key."""


@dataclass(frozen=True, slots=True, order=True)
class KeyParts:
    """The three numbers every post id and timeline key is made of."""

    time: int
    author: int
    seq: int


def encode_number(value: int, width: int) -> str:
    """Fixed-width base-36 digits of ``value``."""
    if not 0 <= value < BASE**width:
        raise ValueError(f"{value} does not fit in {width} base-{BASE} digits")
    chars = []
    for _ in range(width):
        value, digit = divmod(value, BASE)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


def decode_number(text: str) -> int:
    value = 0
    for char in text:
        try:
            value = value * BASE + _DIGITS[char]
        except KeyError:
            raise InvalidKey(f"{char!r} is not a key character") from None
    return value


def _check(key: str) -> None:
    if not is_timeline_key(key):
        raise InvalidKey("a key is 16 characters of 0-9A-Z")


def author_prefix(author_id: int) -> str:
    """The first characters of every post id of this author."""
    return encode_number(author_id, AUTHOR_WIDTH)


def make_post_id(parts: KeyParts) -> str:
    return (
        encode_number(parts.author, AUTHOR_WIDTH)
        + encode_number(parts.time, TIME_WIDTH)
        + encode_number(parts.seq, SEQ_WIDTH)
    )


def make_timeline_key(parts: KeyParts) -> str:
    return (
        encode_number(parts.time, TIME_WIDTH)
        + encode_number(parts.author, AUTHOR_WIDTH)
        + encode_number(parts.seq, SEQ_WIDTH)
    )


def parse_post_id(post_id: str) -> KeyParts:
    _check(post_id)
    return KeyParts(
        author=decode_number(post_id[:AUTHOR_WIDTH]),
        time=decode_number(post_id[AUTHOR_WIDTH : AUTHOR_WIDTH + TIME_WIDTH]),
        seq=decode_number(post_id[AUTHOR_WIDTH + TIME_WIDTH :]),
    )


def parse_timeline_key(key: str) -> KeyParts:
    _check(key)
    return KeyParts(
        time=decode_number(key[:TIME_WIDTH]),
        author=decode_number(key[TIME_WIDTH : TIME_WIDTH + AUTHOR_WIDTH]),
        seq=decode_number(key[TIME_WIDTH + AUTHOR_WIDTH :]),
    )


def post_id_to_timeline_key(post_id: str) -> str:
    """Move the time in front: a string shuffle, no lookup."""
    _check(post_id)
    seq_at = AUTHOR_WIDTH + TIME_WIDTH
    return post_id[AUTHOR_WIDTH:seq_at] + post_id[POST_ID_AUTHOR] + post_id[seq_at:]


def timeline_key_to_post_id(key: str) -> str:
    _check(key)
    seq_at = TIME_WIDTH + AUTHOR_WIDTH
    return key[TIMELINE_KEY_AUTHOR] + key[:TIME_WIDTH] + key[seq_at:]


def stored_keys_to_post_ids(keys: list[str]) -> list[str]:
    """``timeline_key_to_post_id`` of keys read back from an inbox, a cache or the
    posts table, which only ever hold keys this module made: not checked again
    (every page of a feed turns 60 of them; a key from a request is checked
    where it comes in, feed_project.pagination)."""
    seq_at = TIME_WIDTH + AUTHOR_WIDTH
    return [key[TIMELINE_KEY_AUTHOR] + key[:TIME_WIDTH] + key[seq_at:] for key in keys]


def author_of_post_id(post_id: str) -> int:
    """The author of a post, read off its id: the shard key of the post's row
    (feed_project.sharding), so a lookup by id routes to one shard."""
    _check(post_id)
    return decode_number(post_id[POST_ID_AUTHOR])


def author_of_timeline_key(key: str) -> int:
    _check(key)
    return decode_number(key[TIMELINE_KEY_AUTHOR])


LOWEST_KEY = ALPHABET[0] * KEY_LENGTH  # at or below every post id and timeline key


def is_timeline_key(text: object) -> bool:
    """True for a well-formed key, post id or timeline key (same alphabet and length)."""
    if not isinstance(text, str) or len(text) != KEY_LENGTH:
        return False
    return all(char in _DIGITS for char in text)


def time_of(moment: datetime) -> int:
    """Milliseconds since the epoch of the key space."""
    return (moment - EPOCH) // timedelta(milliseconds=1)


def moment_of(time: int) -> datetime:
    return EPOCH + timedelta(milliseconds=time)


def next_post_id(*, author_id: int, now: datetime, last_post_id: str | None) -> str:
    """The id of an author's next post, strictly after their newest one."""
    time = time_of(now)
    seq = 0
    if last_post_id is not None:
        last = parse_post_id(last_post_id)
        if time <= last.time:  # same tick, or the clock went backwards
            time, seq = last.time, last.seq + 1
            if seq > MAX_SEQ:  # the tick is full: borrow the next millisecond
                time, seq = time + 1, 0
    if not 0 <= time <= MAX_TIME:
        raise ValueError("the clock is outside the key space (2025-2114)")
    return make_post_id(KeyParts(time=time, author=author_id, seq=seq))


def post_id_range(author_id: int) -> tuple[str, str]:
    """[low, high) of one author's post ids: a primary-key range scan."""
    prefix = author_prefix(author_id)
    # chr(ord + 1) of the last character sorts after every id with this prefix
    # (':' follows '9' and '[' follows 'Z' in ASCII) and before the next author's.
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def first_post_id_at(author_id: int, time: int) -> str:
    """The lowest post id ``author_id`` can have at ``time``: a bound of range scans."""
    return make_post_id(KeyParts(time=time, author=author_id, seq=0))


def post_id_windows(
    author_ids: list[int], *, since: int | None = None, until: int | None = None
) -> tuple[list[str], list[str]]:
    """For each author, [low, high) of the post ids it can have at times
    ``since <= time < until`` (an end left None is open): the bounds of one
    primary-key range scan each, as full-width keys. One encoding per author,
    the times' digits once: a page pulled from thousands of authors needs them."""
    low_tail = make_post_id(KeyParts(time=since or 0, author=0, seq=0))[AUTHOR_WIDTH:]
    high_tail = None
    if until is not None and until <= MAX_TIME:
        high_tail = make_post_id(KeyParts(time=until, author=0, seq=0))[AUTHOR_WIDTH:]
    lows, highs = [], []
    for author_id in author_ids:
        prefix = author_prefix(author_id)
        lows.append(prefix + low_tail)
        if high_tail is None:  # the next author's first possible id
            highs.append((prefix[:-1] + chr(ord(prefix[-1]) + 1)).ljust(KEY_LENGTH, ALPHABET[0]))
        else:
            highs.append(prefix + high_tail)
    return lows, highs


def post_id_bounds(author_id: int) -> tuple[str, str]:
    """``post_id_range`` as two full-width keys: [first possible id, next author's first)."""
    _, high = post_id_range(author_id)
    return first_post_id_at(author_id, 0), high.ljust(KEY_LENGTH, ALPHABET[0])


# --- Keys as the decimal numbers of a JSON API's ids ----------------------------
# A timeline key read as one base-36 number is the same number in decimal: no
# lookup either way, and as the digits are fixed-width, the numbers sort as the
# keys do (compared by length, then as text, as Mastodon's clients compare ids).
HIGHEST_KEY = ALPHABET[-1] * KEY_LENGTH  # at or above every post id and timeline key
MAX_DECIMAL_DIGITS = len(str(BASE**KEY_LENGTH - 1))


def decimal_of_key(key: str) -> str:
    """A timeline key as a decimal number (a status id)."""
    _check(key)
    return str(decode_number(key))


def key_of_decimal(text: object) -> str:
    """The timeline key a decimal status id stands for; InvalidKey unless ``text`` is
    digits alone for a number a key can hold."""
    if not isinstance(text, str) or not text.isascii() or not text.isdigit():
        raise InvalidKey("a status id is a decimal number")
    if len(text) > MAX_DECIMAL_DIGITS or int(text) >= BASE**KEY_LENGTH:
        raise InvalidKey("a status id is at most a 16-digit base-36 key")
    return encode_number(int(text), KEY_LENGTH)


def author_bound_below(key: str, author_id: int) -> str:
    """The post id of ``author_id`` that bounds a range of their posts as ``key`` bounds
    a timeline: for each of their posts p, ``p.id < bound`` exactly when
    ``p.timeline_key < key`` (an author's page read by primary key, with a cursor
    taken from another list)."""
    at = parse_timeline_key(key)
    if author_id == at.author:
        return make_post_id(at)
    if author_id > at.author:  # their posts of that millisecond sort after the key
        return first_post_id_at(author_id, at.time)
    if at.time == MAX_TIME:  # every post of theirs is below
        return post_id_bounds(author_id)[1]
    return first_post_id_at(author_id, at.time + 1)


def author_bound_above(key: str, author_id: int) -> str:
    """As ``author_bound_below``, from beneath: ``p.id > bound`` exactly when
    ``p.timeline_key > key``."""
    at = parse_timeline_key(key)
    if author_id == at.author:
        return make_post_id(at)
    if author_id < at.author:  # their posts of that millisecond sort before the key
        return make_post_id(KeyParts(time=at.time, author=author_id, seq=MAX_SEQ))
    if at.time == 0:  # every post of theirs is above: the previous author's last id
        return make_post_id(KeyParts(time=MAX_TIME, author=author_id - 1, seq=MAX_SEQ))
    return make_post_id(KeyParts(time=at.time - 1, author=author_id, seq=MAX_SEQ))
