"""A demo world for development and load tests, written in bulk.

``build_world`` makes users, a skewed follow graph (a few accounts followed by
most people, as on Weibo) and posts spread over the past three weeks, plus a
known login, ``demo`` / ``demo-password-123``. It writes rows directly, many at
a time (COPY on PostgreSQL, ``bulk_create`` elsewhere), and keeps the
invariants the services keep:

- every follow is one ``Followee`` row and its mirror ``Follower`` row;
- ``followers_count``, ``following_count`` and ``posts_count`` equal the rows;
- post ids come from ``posts.ids.next_post_id``, so they carry their author's
  prefix and strictly increase per author; timeline keys are derived from them.

The bulk rows send no signals: nothing is fanned out. Inboxes start empty and
the timeline engine builds them by pull when a reader shows up, as it does for
any reader back from a long absence. Then ``bench.demo_life`` adds a fixed
amount of activity through the services (likes, replies, reposts, follows,
notifications for ``demo``, the moderator ``mod`` and a few reports).

Every generated account has the demo password: one hash, computed once.
"""

import math
import random
import time
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.hashers import make_password
from django.db import connection, transaction
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from bench import demo_life, phrases
from bench.bulk import BULK_BATCH, Progress, chunks, no_progress, write_rows
from bench.words import FIRST_NAMES, LAST_NAMES
from posts import ids
from posts.models import Post
from relations.models import Followee, Follower

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-password-123"
DEFAULT_USERS = 300
DEFAULT_POSTS_PER_USER = 10
DEFAULT_SEED = 1

POSTS_WINDOW = timedelta(days=21)
FOLLOWS_WINDOW = timedelta(days=28)
# Everyone joined before the first follow and the first post of the world.
JOINED_BEFORE = timedelta(days=30)
JOINED_SPREAD = timedelta(days=335)
# Days since last visit: exponential with this mean puts about a quarter of the
# accounts beyond FEED_INACTIVE_DAYS (7), the "offline" readers whose inboxes the
# trim sweep releases (no push reaches them).
MEAN_DAYS_AWAY = 5.0
MAX_DAYS_AWAY = 28.0
# Follows per account: log-normal, median 20, mean about 30, so 100,000
# accounts make about 3 million follows.
FOLLOWING_MEDIAN = 20
FOLLOWING_SIGMA = 0.9
FOLLOWING_MAX = 2000
# Popularity is Zipf: the account of rank r is picked with weight 1 / r**s.
# With s = 1 the top account is followed by nine in ten people or more.
ZIPF_EXPONENT = 1.0
DEMO_FOLLOWING = 80
DEMO_MIN_POSTS = 3


@dataclass(frozen=True)
class WorldReport:
    """What ``build_world`` did; ``created`` is False when the world was already there."""

    created: bool
    users: int = 0
    follows: int = 0
    posts: int = 0
    demo_following: int = 0
    demo_followers: int = 0
    seconds: float = 0.0
    writer: str = ""
    username: str = DEMO_USERNAME
    password: str = DEMO_PASSWORD
    life: demo_life.Life = field(default_factory=demo_life.Life)
    moderator: str = demo_life.MOD_USERNAME
    moderator_password: str = demo_life.MOD_PASSWORD


def demo_user_exists() -> bool:
    return unique_names.username_taken(DEMO_USERNAME)


def build_world(
    *,
    users: int = DEFAULT_USERS,
    posts_per_user: float = DEFAULT_POSTS_PER_USER,
    seed: int = DEFAULT_SEED,
    progress: Progress = no_progress,
) -> WorldReport:
    """Create ``users`` accounts (the demo account among them), their follows and posts.

    Idempotent: when the demo account exists the world is taken as built and
    nothing is written. Everything is one transaction, so a run that fails
    leaves nothing behind and the next run starts over. The same seed and
    sizes give the same world.
    """
    if users < 2:
        raise ValueError("a demo world needs at least 2 users")
    if posts_per_user < 0:
        raise ValueError("posts per user cannot be negative")
    started = time.monotonic()
    rng = random.Random(seed)
    now = timezone.now()
    with transaction.atomic():
        # Two runs at once: the second waits here, then finds the demo account.
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ADVISORY_LOCK])
        if demo_user_exists():
            return WorldReport(created=False)
        graph = _draw_graph(rng, users)
        post_counts = _draw_post_counts(rng, users, posts_per_user)
        user_ids = _insert_users(rng, users, graph, post_counts, now, progress)
        _insert_follows(rng, graph, user_ids, now, progress)
        total_posts = _insert_posts(rng, user_ids, post_counts, now, progress)
        life = demo_life.bring_to_life(rng=rng, demo_id=user_ids[0], user_ids=user_ids)
    return WorldReport(
        created=True,
        users=users,
        follows=len(graph.follower),
        posts=total_posts,
        demo_following=graph.following_count[0],
        demo_followers=graph.followers_count[0],
        seconds=time.monotonic() - started,
        writer="COPY" if connection.vendor == "postgresql" else "bulk_create",
        life=life,
    )


# Any constant 64-bit number, the same for every run of seed_demo.
_ADVISORY_LOCK = 0x5EED_DE30


@dataclass
class _Graph:
    """Follows by account index (0 is the demo account), sorted by follower then followee."""

    follower: array
    followee: array
    following_count: array
    followers_count: array


def _draw_graph(rng: random.Random, n: int) -> _Graph:
    # Rank 1 is the most followed account; who gets which rank is random, and
    # the demo account (index 0) is one of the crowd.
    by_rank = list(range(n))
    rng.shuffle(by_rank)
    cum_weights = list(_accumulate(1.0 / (rank**ZIPF_EXPONENT) for rank in range(1, n + 1)))
    cap = min(FOLLOWING_MAX, (n - 1) // 2 or 1)
    follower, followee = array("q"), array("q")
    following_count, followers_count = array("q", [0]) * n, array("q", [0]) * n
    for index in range(n):
        if index == 0:
            # The demo reader follows the ten biggest accounts and more, so the
            # feed mixes pushed (ordinary) and pulled (big) authors.
            wanted = min(DEMO_FOLLOWING, n - 1)
            chosen = {other: None for other in by_rank[:11] if other != 0}
        else:
            median = math.log(FOLLOWING_MEDIAN)
            wanted = min(cap, int(rng.lognormvariate(median, FOLLOWING_SIGMA)))
            chosen = {}
        for _ in range(10):  # rejection sampling; a small world may end up short
            if len(chosen) >= wanted:
                break
            for rank in rng.choices(range(n), cum_weights=cum_weights, k=2 * wanted + 4):
                other = by_rank[rank]
                if other != index:
                    chosen[other] = None
        for other in sorted(list(chosen)[:wanted]):
            follower.append(index)
            followee.append(other)
            followers_count[other] += 1
        following_count[index] = min(len(chosen), wanted)
    return _Graph(follower, followee, following_count, followers_count)


def _accumulate(values: Iterable[float]) -> Iterator[float]:
    total = 0.0
    for value in values:
        total += value
        yield total


def _draw_post_counts(rng: random.Random, n: int, mean: float) -> array:
    counts = array("q", [0]) * n
    if mean > 0:
        for index in range(n):
            counts[index] = round(rng.expovariate(1 / mean))
        counts[0] = max(counts[0], DEMO_MIN_POSTS)
    return counts


def usernames(rng: random.Random, n: int) -> list[str]:
    """Letters, digits and underscores; none taken already (case-insensitively)."""
    names = [DEMO_USERNAME] + [
        f"{rng.choice(FIRST_NAMES)}_{rng.choice(LAST_NAMES)}{index}" for index in range(1, n)
    ]
    taken: set[str] = set()
    for chunk in chunks(names[1:], 5000):
        taken.update(unique_names.user_ids_named(chunk))
    # "_" cannot end a generated name, so the new name is not one of the others.
    return [name + "_" if name.lower() in taken else name for name in names]


def _insert_users(
    rng: random.Random,
    n: int,
    graph: _Graph,
    post_counts: array,
    now: datetime,
    progress: Progress,
) -> list[int]:
    """Insert the accounts with their counters already right; their ids by index."""
    password = make_password(DEMO_PASSWORD)  # once: hashing is slow on purpose
    accounts = []
    for index, username in enumerate(usernames(rng, n)):
        if index == 0:
            last_active = now
            display_name = "Demo Reader"
        else:
            days_away = min(MAX_DAYS_AWAY, rng.expovariate(1 / MEAN_DAYS_AWAY))
            last_active = now - timedelta(days=days_away)
            first, last = username.split("_")[:2]
            display_name = f"{first.capitalize()} {last.rstrip('0123456789').capitalize()}"
        accounts.append(
            User(
                username=username,
                password=password,
                email=f"{username}@example.com",
                display_name=display_name,
                date_joined=now - JOINED_BEFORE - JOINED_SPREAD * rng.random(),
                last_active_at=last_active,
                followers_count=graph.followers_count[index],
                following_count=graph.following_count[index],
                posts_count=post_counts[index],
            )
        )
    bar = progress("users", n)
    for batch in chunks(accounts, BULK_BATCH):
        User.objects.bulk_create(batch, batch_size=BULK_BATCH)
        bar.update(len(batch))
    bar.close()
    # By name, not from RETURNING: a backend may lack it, and Citus returns a
    # multi-row INSERT's rows shard by shard, not in the order they were given.
    by_name = dict(
        User.objects.filter(username__in=[a.username for a in accounts]).values_list(
            "username", "pk"
        )
    )
    user_ids = [by_name[account.username] for account in accounts]
    unique_names.claim_bulk(
        (pk, account.username, account.email)
        for pk, account in zip(user_ids, accounts, strict=True)
    )
    return user_ids


def _insert_follows(
    rng: random.Random, graph: _Graph, user_ids: list[int], now: datetime, progress: Progress
) -> None:
    """Each follow is written twice, once per table, from the same (a, b, moment)."""
    total = len(graph.follower)
    window = FOLLOWS_WINDOW.total_seconds()
    # Whole seconds: the followers and following pages' cursors are exact then.
    moments = array("q", (int(window * rng.random()) for _ in range(total)))

    def at(edge: int) -> datetime:
        return now - timedelta(seconds=moments[edge])

    followee_rows = (
        (user_ids[graph.follower[e]], user_ids[graph.followee[e]], at(e)) for e in range(total)
    )
    columns = ("user", "followee", "created_at")
    write_rows(Followee, columns, followee_rows, total, "following", progress)

    # The same edges grouped by followee (a counting sort), so Follower rows go
    # in primary-key order too: B-tree inserts stay on the rightmost pages.
    starts = array("q", [0]) * (len(user_ids) + 1)
    for other in graph.followee:
        starts[other + 1] += 1
    for index in range(len(user_ids)):
        starts[index + 1] += starts[index]
    order = array("q", [0]) * total
    for edge in range(total):
        other = graph.followee[edge]
        order[starts[other]] = edge
        starts[other] += 1
    follower_rows = (
        (user_ids[graph.followee[e]], user_ids[graph.follower[e]], at(e)) for e in order
    )
    columns = ("user", "follower", "created_at")
    write_rows(Follower, columns, follower_rows, total, "followers", progress)


def _insert_posts(
    rng: random.Random, user_ids: list[int], post_counts: array, now: datetime, progress: Progress
) -> int:
    total = sum(post_counts)
    window_ms = POSTS_WINDOW // timedelta(milliseconds=1)
    first_ms = ids.time_of(now) - window_ms

    def rows() -> Iterator[tuple[str, str, int, str]]:
        for index, author_id in enumerate(user_ids):
            last_id = None
            times = sorted(first_ms + rng.randrange(window_ms) for _ in range(post_counts[index]))
            for ms in times:
                # next_post_id takes the next sequence number when two posts share
                # a millisecond, exactly as create_post does.
                last_id = ids.next_post_id(
                    author_id=author_id, now=ids.moment_of(ms), last_post_id=last_id
                )
                text = phrases.post_text(rng)
                yield last_id, ids.post_id_to_timeline_key(last_id), author_id, text

    write_rows(Post, ("id", "timeline_key", "author", "text"), rows(), total, "posts", progress)
    return total
