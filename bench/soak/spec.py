"""What a soak run is: its length, clients, faults, and the site's tuning for it."""

from collections.abc import Callable
from dataclasses import dataclass

Log = Callable[[str], None]


def _within(value: float, low: int, high: int) -> int:
    return int(min(high, max(low, value)))


@dataclass(frozen=True)
class SoakSpec:
    clients: int = 8
    seconds: float = 900.0
    faults: bool = True
    seed: int = 10
    # Small, so that every reader's feed passes the cap within minutes: the
    # trims, the floor below which an inbox no longer holds keys, and the pull
    # of older pages all take part.
    inbox_cap: int = 100
    # How long each SIGSTOP lasts.
    pause_seconds: float = 10.0

    @property
    def sweep_after(self) -> int:
        """FEED_SWEEP_AFTER_SECONDS: as the production shape has it for the full run,
        less for a short one, so that work lost to a fault is queued again while
        clients still run, not only in the drain."""
        return _within(self.seconds / 15, 8, 30)

    @property
    def trim_every(self) -> int:
        """FEED_TRIM_EVERY_SECONDS: between trims an inbox runs past its cap by what it
        is pushed meanwhile, in production a small share of the cap. A client posts
        about once a second, so here trims come as often as about half a cap of
        pushes: inboxes hover near the cap, and deletions and unfollows bring them
        under it, where a trim leaves an inbox as it is."""
        return _within(self.inbox_cap / (2 * self.clients), 5, 60)

    @property
    def visibility_timeout(self) -> int:
        """CELERY_VISIBILITY_TIMEOUT: production's 300 s for the full run, a third of a
        short one; either way a killed worker's tasks, and tasks whose acknowledgement
        a broker fault lost, come back within the run or its drain, after the sweeper
        has queued them again (so they arrive late, and twice)."""
        return _within(self.seconds / 3, 20, 300)

    def check(self) -> None:
        if self.clients < 2:
            raise ValueError("at least 2 clients: they follow each other")
        if self.seconds <= 0 or self.pause_seconds <= 0:
            raise ValueError("the run and each pause last longer than 0 s")
        if self.inbox_cap < 1:
            raise ValueError("the inbox cap is at least 1")
