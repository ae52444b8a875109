"""What a soak run found, its targets, and the report's lines.

The targets: no accepted post lost; every home feed, walked over HTTP, as the
pull reference has it; no 5xx (nor cut answer) outside a PostgreSQL fault,
and inside one a 503, never a 500; no request over ``LATENCY_TARGET`` outside
a PostgreSQL fault; posts made right after a fault delivered within
``LAG_TARGET``; the outbox and the broker drained; every service still up.
"""

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.soak.clients import Accepted, Request
from bench.soak.spec import SoakSpec

LATENCY_TARGET = 3.0
LAG_TARGET = 10.0
# The posts whose lag is a fault's figure: those made this long after its end
# (or until the next fault, if that comes sooner).
LAG_WINDOW = 10.0


@dataclass
class Fault:
    name: str
    kind: str  # database, cache, broker, worker
    started: float  # time.monotonic() as the fault began
    started_wall: float  # time.time()
    ended: float = 0.0  # as its service was back
    ended_wall: float = 0.0
    error: str = ""  # the fault's own action failed
    held: int | None = None  # fan-out chunks in the broker as a kill aimed at them came

    def overlaps(self, request: Request) -> bool:
        return request.started <= self.ended and self.started <= request.ended


# The two walks of every feed: with the caches the run left, then again after the
# cache Redis restarted empty (the site may lose it at any moment, and must then
# serve the same feeds from PostgreSQL alone).
CACHED = "as cached"
NO_CACHE = "from an empty cache"
WALKS = (CACHED, NO_CACHE)


@dataclass
class FeedCheck:
    """One client's home feed over HTTP against the pull model
    (``timelines.home.pull_model.pull_reference_keys``)."""

    username: str
    shown: int
    expected: int
    walk: str = CACHED
    missing: list[int] = field(default_factory=list)  # their positions in the reference
    extra: int = 0  # shown, not in the reference
    duplicated: int = 0  # shown more than once
    out_of_order: int = 0  # shown, but not in the reference's order
    failed_pages: list[int] = field(default_factory=list)  # statuses of pages not a 200
    # For a missed post: where it was, so that a failure says more than a position.
    clues: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(
            self.missing or self.extra or self.duplicated or self.out_of_order or self.failed_pages
        )

    def line(self) -> str:
        missing = len(self.missing)
        where = f" (at {_positions(self.missing)} of the reference)" if missing else ""
        pages = f", pages failed {self.failed_pages}" if self.failed_pages else ""
        clues = "".join(f"\n      {clue}" for clue in self.clues)
        return (
            f"feed of {self.username} {self.walk}: {self.shown} shown, {self.expected} expected: "
            f"{missing} missing{where}, {self.extra} extra, {self.duplicated} duplicated, "
            f"{self.out_of_order} out of order{pages}{clues}"
        )


def _counts(values: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return ", ".join(f"{n} {value}" for value, n in sorted(counts.items()))


def _positions(positions: list[int], shown: int = 8) -> str:
    text = ", ".join(str(p) for p in positions[:shown])
    return text + (f", ... ({len(positions)})" if len(positions) > shown else "")


def compare(username: str, shown: list[str], expected: list[str], walk: str = CACHED) -> FeedCheck:
    position = {post_id: i for i, post_id in enumerate(expected)}
    check = FeedCheck(username, len(shown), len(expected), walk)
    first: list[str] = []
    seen: set[str] = set()
    for post_id in shown:
        if post_id in seen:
            check.duplicated += 1
        else:
            seen.add(post_id)
            first.append(post_id)
    check.missing = [i for i, post_id in enumerate(expected) if post_id not in seen]
    common = [position[post_id] for post_id in first if post_id in position]
    check.extra = len(first) - len(common)
    # Out of order: the items in both that are not on the longest run kept in the
    # reference's order (so one item moved counts one, not every item it passed).
    tails: list[int] = []
    for index in common:
        at = bisect.bisect_left(tails, index)
        tails[at : at + 1] = [index]
    check.out_of_order = len(common) - len(tails)
    return check


@dataclass
class Lag:
    """Fan-out lags (``FanOut.finished_at - created_at``) of the posts around one fault."""

    fault: str
    after: list[float] = field(default_factory=list)  # posts made in LAG_WINDOW after its end
    during: list[float] = field(default_factory=list)  # posts made while it lasted
    unfinished: int = 0

    def missed(self) -> bool:
        return self.unfinished > 0 or any(lag > LAG_TARGET for lag in self.after)

    def text(self) -> str:
        def figures(lags: list[float]) -> str:
            return f"{len(lags)} posts, max {max(lags):.1f} s" if lags else "no posts"

        unfinished = f", {self.unfinished} never delivered" if self.unfinished else ""
        return f"lag after {figures(self.after)} (during: {figures(self.during)}){unfinished}"


@dataclass
class Report:
    spec: SoakSpec
    requests: list[Request] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    accepted: list[Accepted] = field(default_factory=list)
    deleted: int = 0
    maybe_deleted: int = 0
    lost: list[str] = field(default_factory=list)
    live_after_delete: list[str] = field(default_factory=list)
    feeds: list[FeedCheck] = field(default_factory=list)
    lags: dict[str, Lag] = field(default_factory=dict)
    drained_in: float | None = None  # None: not drained
    left: str = ""  # what was left when the drain ended
    trims: int = 0
    repaired: int = 0  # inboxes the site's self-check found differing and repaired
    exited: list[str] = field(default_factory=list)
    started: float = 0.0  # time.monotonic() as traffic began

    # --- classifying requests ---------------------------------------------------

    def database_fault(self, request: Request) -> Fault | None:
        return next((f for f in self.faults if f.kind == "database" and f.overlaps(request)), None)

    def errors_outside(self) -> list[Request]:
        """5xx and cut answers outside every PostgreSQL fault."""
        return [r for r in self._errors() if self.database_fault(r) is None]

    def errors_inside(self) -> tuple[list[Request], list[Request]]:
        """Inside a PostgreSQL fault: the 503s (expected), and every other 5xx or cut answer."""
        inside = [r for r in self._errors() if self.database_fault(r) is not None]
        return [r for r in inside if r.status == 503], [r for r in inside if r.status != 503]

    def _errors(self) -> list[Request]:
        return [r for r in self.requests if r.status == 0 or r.status >= 500]

    def slow(self) -> list[Request]:
        """Requests over LATENCY_TARGET outside every PostgreSQL fault, slowest first."""
        slow = [
            r
            for r in self.requests
            if r.seconds > LATENCY_TARGET and self.database_fault(r) is None
        ]
        return sorted(slow, key=lambda r: -r.seconds)

    def slowest(self) -> Request | None:
        """The slowest request outside every PostgreSQL fault."""
        outside = [r for r in self.requests if self.database_fault(r) is None]
        return max(outside, key=lambda r: r.seconds, default=None)

    # --- the verdict ---------------------------------------------------------------

    def missed(self) -> list[str]:
        """The targets missed, one phrase each; empty when every one was met."""
        differing = [f for f in self.feeds if f.differs]
        other_inside = self.errors_inside()[1]
        checks = [
            (not self.accepted, "no post accepted"),
            (bool(self.lost), f"{len(self.lost)} lost posts"),
            (bool(self.live_after_delete), f"{len(self.live_after_delete)} deleted posts live"),
            (bool(differing), f"{len(differing)} feeds differing ({len(self.feeds)} walks)"),
            (bool(self.repaired), f"{self.repaired} inboxes repaired by the self-check"),
            (bool(self.errors_outside()), f"{len(self.errors_outside())} 5xx outside"),
            (bool(other_inside), f"{len(other_inside)} 500s in PostgreSQL faults"),
            (bool(self.slow()), f"{len(self.slow())} requests over {LATENCY_TARGET:g} s"),
            (any(lag.missed() for lag in self.lags.values()), "lag over target"),
            (self.drained_in is None, "not drained"),
            (bool(self.exited), f"services exited: {', '.join(self.exited)}"),
            (any(f.error for f in self.faults), "a fault failed"),
        ]
        return [phrase for failed, phrase in checks if failed]

    def lines(self) -> list[str]:
        spec = self.spec
        actions = _counts(r.action for r in self.requests)
        statuses = _counts(str(r.status or "cut") for r in self.requests)
        differing = [f for f in self.feeds if f.differs]
        walked = {walk: [f for f in self.feeds if f.walk == walk] for walk in WALKS}
        counts = ", ".join(
            f"{sum(f.differs for f in checks)} of {len(checks)} {walk}"
            for walk, checks in walked.items()
        )
        past_cap = sum(f.expected > spec.inbox_cap for f in walked[CACHED])
        longest = max((f.expected for f in self.feeds), default=0)
        outside = self.errors_outside()
        expected_503, other_inside = self.errors_inside()
        slow = self.slow()
        slowest = self.slowest()
        drained = "NOT" if self.drained_in is None else f"in {self.drained_in:.1f} s"
        out = [
            f"run              {spec.clients} clients, {spec.seconds:g} s, faults "
            f"{'on' if spec.faults else 'off'}; inbox cap {spec.inbox_cap}, sweep after "
            f"{spec.sweep_after} s, trims every {spec.trim_every} s, visibility timeout "
            f"{spec.visibility_timeout} s",
            f"requests         {len(self.requests)} ({actions})",
            f"statuses         {statuses}",
            f"posts accepted   {len(self.accepted)} ({self.deleted} deleted by their author, "
            f"{self.maybe_deleted} maybe)",
            f"lost posts       {len(self.lost)}",
            f"deleted but live {len(self.live_after_delete)}",
            f"feeds differing  {counts} ({past_cap} past the inbox cap; the longest "
            f"{longest} items)",
        ]
        out += [f"  {f.line()}" for f in differing]
        out += [
            f"trims            {self.trims} trim sweeps ran",
            f"self-check       {self.repaired} inboxes found differing and repaired by the site",
            f"drained          {drained} ({self.left})",
            f"5xx outside      {len(outside)} (outside PostgreSQL faults; cut answers count)",
            f"503 in pg faults {len(expected_503)}",
            f"500 in pg faults {len(other_inside)} (or another 5xx, or cut)",
            f"max latency      {slowest.seconds if slowest else 0:.2f} s outside PostgreSQL "
            f"faults; {len(slow)} over {LATENCY_TARGET:g} s"
            + (f" (slowest: {self._describe(slowest)})" if slowest else ""),
        ]
        out += [f"  {self._describe(r)}" for r in (outside + other_inside)[:10]]
        out += [f"  {r.seconds:.2f} s: {self._describe(r)}" for r in slow[:10]]
        for fault in self.faults:
            lag = self.lags.get(fault.name)
            window = f"{fault.started - self.started:6.1f}-{fault.ended - self.started:6.1f} s"
            error = f", FAILED: {fault.error}" if fault.error else ""
            lags = lag.text() if lag else "no lag measured"
            held = "" if fault.held is None else f"; hit {fault.held} chunks in flight"
            errors = _counts(str(r.status or "cut") for r in self._errors() if fault.overlaps(r))
            errors = f"; 5xx in it: {errors}" if errors else ""
            out.append(f"fault {fault.name:<12} {window}: {lags}{held}{errors}{error}")
        exited = ", ".join(self.exited)
        out.append(f"services         {'exited: ' + exited if exited else 'all up'}")
        missed = "; ".join(self.missed())
        out.append(f"targets          {'missed: ' + missed if missed else 'all met'}")
        return out

    def _describe(self, request: Request) -> str:
        at = request.started - self.started
        during = [f.name for f in self.faults if f.overlaps(request)]
        where = f" during {', '.join(during)}" if during else ""
        return (
            f"{request.status or 'cut'} {request.method} {request.path} ({request.action}, "
            f"client {request.client}, at {at:.1f} s{where})"
        )
