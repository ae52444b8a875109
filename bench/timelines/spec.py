"""What a run is: the bench world's size and names, the run's options, the error."""

from collections.abc import Callable
from dataclasses import dataclass

Log = Callable[[str], None]

AUTHOR = "bench_author"  # followed by every other active user: the fan-out figure
READER = "bench_reader"  # active, follows `following` accounts: the home feed figure
IDLE = "bench_idle_"  # inactive, follow `following` accounts: the rebuild figure
FOLLOWER = "bench_"  # bench_1 ... bench_{users-1}; the first `authors` of them post
MARKER_PREFIX = "bench world v1"


@dataclass(frozen=True)
class WorldSpec:
    """The size of the bench world; recorded in bench_author's bio."""

    users: int  # followers of bench_author, all active with a kept inbox (bench_reader included)
    following: int  # accounts bench_reader and each idle reader follow
    authors: int  # accounts with posts, each posts_min..posts_max of them
    idle_readers: int
    posts_min: int = 10
    posts_max: int = 30
    seed: int = 3
    # Posts by the followers who are not authors, which no measured reader
    # follows: a sparse world, as real ones are (a reader's followees write a
    # small share of all posts), where a plain query must skip past them.
    filler_posts: int = 0

    @property
    def marker(self) -> str:
        return (
            f"{MARKER_PREFIX} users={self.users} following={self.following} "
            f"authors={self.authors} idle={self.idle_readers} "
            f"posts={self.posts_min}-{self.posts_max} seed={self.seed}"
            + (f" filler={self.filler_posts}" if self.filler_posts else "")
        )

    def check(self) -> None:
        if self.users < 2 or self.following < 2 or self.idle_readers < 1:
            raise ValueError("users and following must be at least 2, idle readers at least 1")
        if not self.following <= self.authors < self.users:
            raise ValueError("need following <= authors < users")
        if not 1 <= self.posts_min <= self.posts_max:
            raise ValueError("need 1 <= posts_min <= posts_max")
        if self.filler_posts < 0 or (self.filler_posts and self.authors + 1 >= self.users):
            raise ValueError(
                "filler posts need followers who are not authors (authors < users - 1)"
            )


# The full world is sparse by default, as real ones are: the
# reader's followees write ~20,000 posts, 0.05% of ~40,000,000 (built once, ~30 min
# here, 22 GB, and reused).
FULL = WorldSpec(
    users=100_000, following=1000, authors=8000, idle_readers=10, filler_posts=40_000_000
)
QUICK = WorldSpec(users=5000, following=200, authors=400, idle_readers=3)


@dataclass(frozen=True)
class World:
    author_id: int
    reader_id: int
    idle_ids: list[int]
    followers: int
    posts: int
    built: bool
    seconds: float


class WorldError(Exception):
    """The database holds a different bench world, or is not one the bench can use."""


@dataclass(frozen=True)
class Options:
    samples: int = 200
    warmup: int = 20
    rebuild_runs: int = 20
    rebuild_warmup: int = 3
    fanouts: int = 3
    fanout_warmup: int = 1
    live_caches: int | None = None  # None: half the followers
    worker: bool = True
    timeout: float = 300.0
    inbox_entries: int = 100  # entries per follower's inbox before the fan-out figure
    wide_following: int = 5000  # accounts the wide reader follows (figure 4)
