"""Who may see whom: the one module that reads blocks, follows and mutes for a viewer.

The rules, each about a viewer V and a user U (docs/ARCHITECTURE.md, "One visibility rule"):

- **blocked either way**: V blocks U or U blocks V. Neither sees the other:
  no posts, reposts of them, replies, notifications, search results, list
  entries, follows.
- **followed or self**: U is V, or V follows U. A home feed is made of them.
- **muted**: V muted U. U's posts and reposts leave V's home feed.
- **reposts hidden**: V follows U with ``hide_reposts``: U's plain reposts leave
  V's home feed (U's own posts stay).
- **muted words**: a text V reads (a post's text or content warning, a repost's
  original's) matching one
  of V's muted words in force (``relations.muted_words``) leaves V's home feed,
  threads, notifications and search.

Every list asks here, in the form it needs: ``Q`` builders over any field
that names a user (``"author_id"``, ``"repost_of__author_id"``, ``"pk"``) for
the ORM, SQL fragments over a column for raw statements (the viewer is the
``%(viewer)s`` parameter), checks of one pair, and a ``Standing`` read
first and checked in Python. The ``Q`` builders read the viewer's list (a
range of ``Block (user, blocked)``, ``Followee (user, followee)`` or
``Mute (user, muted)``, or blocks of the viewer by ``block.blocked_id``); the
SQL fragments probe those keys row by row. ``tests/relations/test_visibility.py`` holds the forms
equal. Rules about posts themselves (deleted, hidden, a repost's original)
are built from these in ``posts.visibility``.
"""

import operator
from collections.abc import Collection
from dataclasses import dataclass
from functools import reduce

from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    Expression,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Value,
    When,
)
from django.db.models.lookups import IRegex

from feed_project import sharding
from relations import muted_words
from relations.models import Block, Followee, FollowRequest, Mute, MutedWord

# --- the ORM form ---------------------------------------------------------------


def _among(user_field: str, users) -> Q:
    return Q(**{f"{user_field}__in": users})


# Each rule is a list the subquery reads by the viewer, not a probe correlated
# with the outer row: PostgreSQL plans both alike, and a Citus cluster can run
# it (the list first, on the viewer's shard, then the outer query anywhere).


def blocked_either_way(viewer_id: int, user_field: str) -> Q:
    """Rows whose ``user_field`` user blocks the viewer or is blocked by them."""
    return _among(
        user_field, Block.objects.filter(user_id=viewer_id).values("blocked_id")
    ) | _among(user_field, Block.objects.filter(blocked_id=viewer_id).values("user_id"))


def followed_or_self(viewer_id: int, user_field: str) -> Q:
    """Rows whose ``user_field`` user is the viewer or someone the viewer follows."""
    followed = Followee.objects.filter(user_id=viewer_id).values("followee_id")
    return Q(**{user_field: viewer_id}) | _among(user_field, followed)


def muted(viewer_id: int, user_field: str) -> Q:
    """Rows whose ``user_field`` user the viewer muted."""
    return _among(user_field, Mute.objects.filter(user_id=viewer_id).values("muted_id"))


def reposts_hidden(viewer_id: int, user_field: str) -> Q:
    """Rows whose ``user_field`` user the viewer follows with their reposts hidden."""
    hidden = Followee.objects.filter(user_id=viewer_id, hide_reposts=True)
    return _among(user_field, hidden.values("followee_id"))


def muted_words_match(viewer_id: int, *text_fields: str) -> Exists | Expression:
    """Rows any of whose ``text_fields`` (a post's text, its content warning) matches
    one of the viewer's muted words in force.

    On Citus a probe correlated with a post (another user's shard) is refused:
    there the viewer's patterns are read first (one shard) and matched as
    literals, ``text ~* pattern`` as in the subquery."""
    words = MutedWord.objects.filter(muted_words.live(), user_id=viewer_id)
    if not sharding.on_citus(connection):
        matched = [Q(IRegex(OuterRef(field), F("pattern"))) for field in text_fields]
        return Exists(words.filter(reduce(operator.or_, matched)))
    patterns = list(words.values_list("pattern", flat=True))
    if not patterns:
        return Value(False, output_field=BooleanField())
    literal = Q()
    for pattern in patterns:
        for field in text_fields:
            literal |= Q(**{f"{field}__iregex": pattern})
    return ExpressionWrapper(literal, output_field=BooleanField())


STANDINGS = (
    "viewer_follows",
    "viewer_blocks",
    "blocks_viewer",
    "viewer_mutes",
    "viewer_requested",
    "viewer_hides_reposts",
    "viewer_notified",
)


# Each standing, a primary-key probe of the viewer's rows (a follow and its options,
# a block, a mute) or the person's (a block of the viewer, the viewer's pending
# follow request): the names of those that hold. One statement, each leg on its
# own user's shard; as seven QuerySets in a union, building it cost more CPU than
# running it, on every profile page.
_STANDINGS_SQL = f"""
SELECT 'viewer_follows' FROM {Followee._meta.db_table} s1
  WHERE s1.user_id = %(viewer)s AND s1.followee_id = %(user)s
UNION ALL SELECT 'viewer_blocks' FROM {Block._meta.db_table} s2
  WHERE s2.user_id = %(viewer)s AND s2.blocked_id = %(user)s
UNION ALL SELECT 'blocks_viewer' FROM {Block._meta.db_table} s3
  WHERE s3.user_id = %(user)s AND s3.blocked_id = %(viewer)s
UNION ALL SELECT 'viewer_mutes' FROM {Mute._meta.db_table} s4
  WHERE s4.user_id = %(viewer)s AND s4.muted_id = %(user)s
UNION ALL SELECT 'viewer_requested' FROM {FollowRequest._meta.db_table} s5
  WHERE s5.user_id = %(user)s AND s5.requester_id = %(viewer)s
UNION ALL SELECT 'viewer_hides_reposts' FROM {Followee._meta.db_table} s6
  WHERE s6.user_id = %(viewer)s AND s6.followee_id = %(user)s AND s6.hide_reposts
UNION ALL SELECT 'viewer_notified' FROM {Followee._meta.db_table} s7
  WHERE s7.user_id = %(viewer)s AND s7.followee_id = %(user)s AND s7.notify_posts
"""


def where_viewer_stands(viewer_id: int, user_id: int) -> dict[str, bool]:
    """Where the viewer stands with one person (``STANDINGS``): one statement."""
    with connection.cursor() as cursor:
        cursor.execute(_STANDINGS_SQL, {"viewer": viewer_id, "user": user_id})
        found = {name for (name,) in cursor.fetchall()}
    return {name: name in found for name in STANDINGS}


# --- the SQL form: the same rules over a column, the viewer as %(viewer)s ------


def sql_blocked_either_way(column: str) -> str:
    block = Block._meta.db_table
    return (
        f"(EXISTS (SELECT 1 FROM {block} b"
        f" WHERE b.user_id = %(viewer)s AND b.blocked_id = {column})"
        f" OR {sql_blocks_viewer(column)})"
    )


def sql_blocks_viewer(column: str) -> str:
    """Whether the ``column`` user blocked the viewer: a probe of their own list (on
    a Citus cluster, their shard, correlated on its key)."""
    block = Block._meta.db_table
    return (
        f"EXISTS (SELECT 1 FROM {block} b WHERE b.user_id = {column} AND b.blocked_id = %(viewer)s)"
    )


def sql_followed_or_self(column: str, *, few_rows: bool = False) -> str:
    """Whether the viewer is the ``column`` user or follows them.

    ``few_rows``: for a statement that checks a handful of rows (a feed page's
    twenty), one probe of the viewer's follows per row. Left to itself,
    PostgreSQL reads and hashes the whole list instead, which is right for
    thousands of rows but not for twenty: a prepared statement's plan does it
    anyway (it guesses two follows for any viewer), 1,000 follows hashed on
    every page (docs/BENCHMARKS.md has the cost). ``OFFSET 0`` keeps it
    from hashing; SQLite never hashes, and Citus refuses OFFSET in a correlated
    subquery."""
    followee = Followee._meta.db_table
    fence = " OFFSET 0" if few_rows and sharding.on_plain_postgresql(connection) else ""
    return (
        f"({column} = %(viewer)s OR EXISTS (SELECT 1 FROM {followee} f"
        f" WHERE f.user_id = %(viewer)s AND f.followee_id = {column}{fence}))"
    )


# Lists read by the viewer (``column IN (...)``): a Citus cluster runs them first, on
# the viewer's shard, where it refuses a probe correlated on another column than the
# shard key.


def sql_followee_ids() -> str:
    """The people the viewer follows."""
    return (
        f"(SELECT fe.followee_id FROM {Followee._meta.db_table} fe WHERE fe.user_id = %(viewer)s)"
    )


def sql_self_and_followees() -> str:
    """The viewer and the people they follow, as rows of one column, ``id``: what a
    lookup walks when it probes per person rather than scanning the other side."""
    return (
        f"(SELECT %(viewer)s AS id UNION ALL"
        f" SELECT fw.followee_id FROM {Followee._meta.db_table} fw WHERE fw.user_id = %(viewer)s)"
    )


def sql_blocked_ids() -> str:
    """The people the viewer blocked."""
    return f"(SELECT bd.blocked_id FROM {Block._meta.db_table} bd WHERE bd.user_id = %(viewer)s)"


def sql_muted(column: str) -> str:
    mute = Mute._meta.db_table
    return f"EXISTS (SELECT 1 FROM {mute} m WHERE m.user_id = %(viewer)s AND m.muted_id = {column})"


def sql_reposts_hidden(column: str) -> str:
    followee = Followee._meta.db_table
    return (
        f"EXISTS (SELECT 1 FROM {followee} h WHERE h.user_id = %(viewer)s"
        f" AND h.followee_id = {column} AND h.hide_reposts)"
    )


def sql_muted_words(*texts: str) -> str:
    """Whether any of these text columns matches one of the viewer's muted words in
    force (``%(now)s`` is the time, so that every dialect agrees on expiry)."""
    word = MutedWord._meta.db_table
    if connection.vendor == "postgresql":
        matched = " OR ".join(f"{text} ~* w.pattern" for text in texts)
    else:  # SQLite: Django's REGEXP function is Python's re
        matched = " OR ".join(f"{text} REGEXP '(?i)' || w.pattern" for text in texts)
    return (
        f"EXISTS (SELECT 1 FROM {word} w WHERE w.user_id = %(viewer)s"
        f" AND (w.expires_at IS NULL OR w.expires_at > %(now)s) AND ({matched}))"
    )


def sql_muted_words_of(viewer_id: int, params: dict[str, object], *texts: str) -> str:
    """``sql_muted_words`` where a statement runs anywhere (``%(now)s`` as there); on
    Citus, which refuses a probe of the viewer's rows correlated with a post on
    another shard, the viewer's patterns are read first (one shard) and matched as
    literals, as ``muted_words_match`` does: ``FALSE`` when there are none."""
    if not sharding.on_citus(connection):
        return sql_muted_words(*texts)
    words = MutedWord.objects.filter(muted_words.live(), user_id=viewer_id)
    matched = []
    for n, pattern in enumerate(words.values_list("pattern", flat=True)):
        params[f"muted_{n}"] = pattern
        matched += [f"{text} ~* %(muted_{n})s" for text in texts]
    return f"({' OR '.join(matched)})" if matched else "FALSE"


# --- the set form: where a viewer stands, read first, checked in Python --------
# For a cluster, where a statement may not join a user's rows to another
# user's (docs/SCALING.md): the viewer's follows and mutes are one shard's
# rows, read whole; blocks either way are read for the users in question.


@dataclass(frozen=True)
class Standing:
    """Where a viewer stands: whom they follow and mute, and who of some users is
    blocked either way with them."""

    viewer_id: int
    followed: frozenset[int]
    muted: frozenset[int]
    blocked: frozenset[int]
    reposts_hidden: frozenset[int] = frozenset()
    muted_patterns: tuple[str, ...] = ()

    def followed_or_self(self, user_id: int) -> bool:
        return user_id == self.viewer_id or user_id in self.followed

    def is_muted(self, user_id: int) -> bool:
        return user_id in self.muted

    def blocked_either_way(self, user_id: int) -> bool:
        return user_id in self.blocked

    def hides_reposts_of(self, user_id: int) -> bool:
        return user_id in self.reposts_hidden

    def mutes_text(self, *texts: str | None) -> bool:
        """Whether any of ``texts`` (a post's text, its content warning) matches one of
        the viewer's muted words in force."""
        return any(
            muted_words.matches(pattern, text)
            for text in texts
            if text
            for pattern in self.muted_patterns
        )


def blocked_among(viewer_id: int, user_ids: Collection[int]) -> set[int]:
    """Which of ``user_ids`` are blocked either way with the viewer: one statement."""
    if not user_ids:
        return set()
    by_viewer = Q(user_id=viewer_id, blocked_id__in=user_ids)
    of_viewer = Q(user_id__in=user_ids, blocked_id=viewer_id)
    rows = Block.objects.filter(by_viewer | of_viewer).values_list("user_id", "blocked_id")
    return {blocked if user == viewer_id else user for user, blocked in rows}


def standing(viewer_id: int, blocks_among: Collection[int] = ()) -> Standing:
    """The viewer's follows (with reposts hidden or not), mutes and muted words in
    force (one statement, on the viewer's shard), and which of ``blocks_among`` are
    blocked either way with them (one more)."""
    follows = Followee.objects.filter(user_id=viewer_id)
    kind = Case(When(hide_reposts=True, then=Value("h")), default=Value("f"))
    words = MutedWord.objects.filter(muted_words.live(), user_id=viewer_id)
    own = follows.values_list(kind, "followee_id", Value("")).union(
        Mute.objects.filter(user_id=viewer_id).values_list(Value("m"), "muted_id", Value("")),
        words.values_list(Value("w"), Value(0), "pattern"),
        all=True,
    )
    rows: dict[str, set[int]] = {"f": set(), "h": set(), "m": set()}
    patterns = []
    for row_kind, user_id, pattern in own:
        if row_kind == "w":
            patterns.append(pattern)
        else:
            rows[row_kind].add(user_id)
    return Standing(
        viewer_id,
        frozenset(rows["f"] | rows["h"]),
        frozenset(rows["m"]),
        frozenset(blocked_among(viewer_id, blocks_among)),
        reposts_hidden=frozenset(rows["h"]),
        muted_patterns=tuple(patterns),
    )


# --- one pair ---------------------------------------------------------------------


def is_blocked_either_way(a_id: int, b_id: int) -> bool:
    return Block.objects.filter(
        Q(user_id=a_id, blocked_id=b_id) | Q(user_id=b_id, blocked_id=a_id)
    ).exists()


def followed_among(viewer_id: int, user_ids: Collection[int]) -> set[int]:
    """Which of ``user_ids`` the viewer follows: one range of the viewer's Followee rows."""
    rows = Followee.objects.filter(user_id=viewer_id, followee_id__in=user_ids)
    return set(rows.values_list("followee_id", flat=True))


def follows(viewer_id: int, user_id: int) -> bool:
    """Whether the viewer follows the user: one primary-key probe on the viewer's shard."""
    return Followee.objects.filter(user_id=viewer_id, followee_id=user_id).exists()


def is_muted(viewer_id: int, user_id: int) -> bool:
    return Mute.objects.filter(user_id=viewer_id, muted_id=user_id).exists()


def shut_out_among(viewer_id: int, user_ids: Collection[int]) -> set[int]:
    """Which of ``user_ids`` a suggestion to the viewer leaves out: blocked or muted
    either way, or asked by the viewer to follow them (a pending request). One
    statement of five legs, each by its user (the viewer's rows, or theirs)."""
    if not user_ids:
        return set()
    ids = list(user_ids)
    legs = [
        Block.objects.filter(user_id=viewer_id, blocked_id__in=ids).values_list("blocked_id"),
        Block.objects.filter(user_id__in=ids, blocked_id=viewer_id).values_list("user_id"),
        Mute.objects.filter(user_id=viewer_id, muted_id__in=ids).values_list("muted_id"),
        Mute.objects.filter(user_id__in=ids, muted_id=viewer_id).values_list("user_id"),
        FollowRequest.objects.filter(user_id__in=ids, requester_id=viewer_id).values_list(
            "user_id"
        ),
    ]
    first, *rest = legs
    return {user_id for (user_id,) in first.union(*rest, all=True)}
