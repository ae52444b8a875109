"""After the traffic: wait for the site to drain by itself, then check it, on the run's database.

Nothing is swept or run here: the drain waits for the site's own beat and
worker to leave no ``PendingTask`` row, no unfinished ``FanOut``, and no
message in the broker, queued or delivered and unacknowledged (such a message
would run after the check: a late chunk the check never saw). The checks read
the run's PostgreSQL through this process's default connection, swapped for
the run's while they last (``on_database``).
"""

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import environ
from django.db import connections
from django.db.utils import load_backend

from accounts.models import User
from bench.soak.clients import Client, walk_home_feed
from bench.soak.report import LAG_WINDOW, NO_CACHE, WALKS, FeedCheck, Lag, Report, compare
from bench.soak.services import Services
from feed_project.pagination import Cursor
from posts import ids
from posts.models import Post
from timelines.home import _cache as cache
from timelines.home._models import InboxEntry, InboxState
from timelines.home.pull_model import pull_reference_keys
from timelines.models import FanOut, PendingTask

# The beat's sweep runs every 15 s (fixed in the settings).
SWEEP_EVERY_SECONDS = 15


@contextmanager
def on_database(url: str) -> Iterator[None]:
    """This thread's default database is the one at ``url`` inside the block.

    A new connection under the default alias, the configured one put back
    after: whatever the command was started with (SQLite, another server),
    the ORM and ``django.db.connection`` read the run's database meanwhile.
    """
    previous = connections["default"]
    config = connections.configure_settings({"default": environ.Env.db_url_config(url)})
    wrapper = load_backend(config["default"]["ENGINE"]).DatabaseWrapper(
        config["default"], "default"
    )
    connections["default"] = wrapper
    try:
        yield
    finally:
        wrapper.close()
        connections["default"] = previous


def drain_seconds(report: Report) -> float:
    """Long enough for a killed worker's tasks to come back and the sweeper to run twice."""
    spec = report.spec
    return spec.visibility_timeout + spec.sweep_after + 2 * SWEEP_EVERY_SECONDS + 60


def drain(services: Services, report: Report) -> None:
    started = time.monotonic()
    deadline = started + drain_seconds(report)

    def left() -> tuple[int, int, bool]:
        try:
            pending = PendingTask.objects.count()
            unfinished = FanOut.objects.filter(finished_at__isnull=True).count()
        finally:
            connections["default"].close()  # a fresh connection for every look
        return pending, unfinished, services.broker_empty()

    def drained() -> bool:
        pending, unfinished, empty = left()
        return pending == 0 and unfinished == 0 and empty

    while time.monotonic() < deadline:
        # Twice, apart: a message between the broker's pop and its unacked hash,
        # or a task between its commit and its next row, is in neither.
        if drained():
            time.sleep(1.0)
            if drained():
                report.drained_in = time.monotonic() - started
                break
        time.sleep(1.0)
    pending, unfinished, empty = left()
    report.left = (
        f"{pending} pending tasks, {unfinished} unfinished fan-outs, "
        f"broker {'empty' if empty else 'not empty'}"
    )


def check_posts(clients: list[Client], report: Report) -> None:
    maybe_deleted = set().union(*(c.maybe_deleted for c in clients))
    deleted = set().union(*(c.deleted for c in clients))
    report.deleted, report.maybe_deleted = len(deleted), len(maybe_deleted)
    wanted = [a.post_id for a in report.accepted]
    live = set(
        Post.objects.with_ids(wanted).filter(deleted_at__isnull=True).values_list("id", flat=True)
    )
    report.lost = [
        post_id
        for post_id in wanted
        if post_id not in live and post_id not in deleted and post_id not in maybe_deleted
    ]
    report.live_after_delete = sorted(deleted & live)


def check_feeds(clients: list[Client], services: Services, report: Report) -> None:
    """Each client's whole home feed over HTTP, as its own session, against the reference:
    walked as the caches are, then again once the cache Redis has restarted empty."""
    users = dict(
        User.objects.filter(username__in=[c.username for c in clients]).values_list(
            "username", "pk"
        )
    )
    expected = {c.username: reference(users[c.username]) for c in clients}
    walk_requests: list = []  # kept apart: the figures are the traffic's
    for walk in WALKS:
        if walk == NO_CACHE:
            services.fault("cache_kill")
        for client in clients:
            client.browser.record = walk_requests.append
            client.browser.action = "walk"
            shown, failed = walk_home_feed(client.browser)
            check = compare(client.username, shown, expected[client.username], walk)
            check.failed_pages = failed
            check.clues = clues(users[client.username], expected[client.username], check, services)
            report.feeds.append(check)


CLUES = 3  # missed posts described a feed


def clues(reader_id: int, expected: list[str], check: FeedCheck, services: Services) -> list[str]:
    """Where the first missed posts were: the post, and whether the reader's inbox
    table and cache held it, beside the inbox's floor and the cache's extent."""
    if not check.missing:
        return []
    floor = InboxState.objects.filter(reader_id=reader_id).values_list("floor", flat=True).first()
    entries = InboxEntry.objects.filter(reader_id=reader_id)
    table = set(entries.values_list("timeline_key", flat=True))
    members = services.cache.client().lrange(cache.inbox_key(reader_id, cache.generation()), 1, -1)
    cached = [member.decode() for member in members]
    found = []
    for position in check.missing[:CLUES]:
        post = (
            Post.objects.with_id(expected[position])
            .values("timeline_key", "author_id", "repost_of_id", "created_at")
            .first()
            or {}
        )
        key = post.get("timeline_key")
        found.append(
            f"#{position} {expected[position]} {post}: in the table {key in table}, "
            f"in the cache {key in cached} (its {len(cached)} keys {cached[:1]}..{cached[-1:]}), "
            f"floor {floor}"
        )
    return found


def reference(reader_id: int) -> list[str]:
    """The post ids the reader's home feed shows by the pull model, in its order: a
    repost is shown as its original, at the newest of them."""
    keys = pull_reference_keys(reader_id=reader_id, cursor=Cursor(), limit=10**9)
    post_ids = [ids.timeline_key_to_post_id(key) for key in keys]
    originals = dict(Post.objects.with_ids(post_ids).values_list("id", "repost_of_id"))
    return [originals.get(post_id) or post_id for post_id in post_ids]


def check_lags(report: Report, traffic_ended_wall: float) -> None:
    """Per fault, the fan-out lags of the posts made right after it ended, and during it."""
    accepted = [a.post_id for a in report.accepted]
    rows = list(
        FanOut.objects.filter(post_id__in=accepted).values_list("created_at", "finished_at")
    )
    for i, fault in enumerate(report.faults):
        following = report.faults[i + 1].started_wall if i + 1 < len(report.faults) else None
        end = min(fault.ended_wall + LAG_WINDOW, following or traffic_ended_wall)
        lag = Lag(fault.name)
        for created, finished in rows:
            at = created.timestamp()
            if fault.started_wall <= at < end:
                if finished is None:
                    lag.unfinished += 1
                    continue
                seconds = _seconds(finished, created)
                (lag.after if at >= fault.ended_wall else lag.during).append(seconds)
        report.lags[fault.name] = lag


def _seconds(finished: datetime, created: datetime) -> float:
    return (finished - created).total_seconds()


TRIM_DONE = re.compile(r"Task timelines\.trim_inboxes\[[^\]]*\] succeeded")


def count_trims(services: Services) -> int:
    """Trim sweeps the workers ran to the end (their logs say each task that succeeded)."""
    return sum(
        len(TRIM_DONE.findall(path.read_text(errors="replace")))
        for path in services.logs.glob("worker-*.log")
    )


# What the site's own self-check logs when it found inboxes differing from the
# pull model, and repaired them (timelines.verify_inboxes, where the site has it).
REPAIRED = re.compile(r"inbox self-check: (\d+) of \d+ inboxes differed")


def count_repairs(services: Services) -> int:
    """Inboxes the site's self-check repaired: each one differed, whatever the walk finds."""
    return sum(
        int(found)
        for path in services.logs.glob("worker-*.log")
        for found in REPAIRED.findall(path.read_text(errors="replace"))
    )
