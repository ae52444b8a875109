"""``bench_http``: the site's pages over HTTP under gunicorn, beside a bare Django page.

One gunicorn (``bench.http_settings``: the product's settings and middleware,
plus the ``/bench/bare/`` route) serves a small world; wrk, signed in as the
reader, drives each page for a few seconds in turn, round after round, and
the figures per page are requests per second, wrk's p50 and p99, and CPU
seconds per request of the gunicorn workers and of the PostgreSQL backends
serving them (read from /proc), with Redis's whole-server CPU beside them.
"""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection
from django.test import Client

from accounts.models import User
from bench import demo
from bench.processes import database_url, free_port
from bench.timelines import cpu
from bench.timelines.worker import tasks_in_process
from feed_project.pagination import Cursor
from posts import services as posts_services
from posts.models import Post
from relations import services as relations_services
from relations.models import Followee
from timelines.home import home_feed

Log = Callable[[str], None]
MARKER_PREFIX = "bench_http world v1"


class HttpBenchError(Exception):
    """The database, the world, the server or the load generator is not fit to measure."""


@dataclass(frozen=True)
class HttpSpec:
    """The world: a demo world of ``users``, whose ``demo`` account follows ``following``."""

    users: int
    posts_per_user: int
    following: int
    replies: int = 20
    seed: int = 7

    @property
    def marker(self) -> str:
        return (
            f"{MARKER_PREFIX} users={self.users} posts={self.posts_per_user} "
            f"following={self.following} replies={self.replies} seed={self.seed}"
        )


FULL = HttpSpec(users=3000, posts_per_user=20, following=300)
QUICK = HttpSpec(users=300, posts_per_user=10, following=60)


@dataclass(frozen=True)
class World:
    reader: str  # username of the signed-in reader
    profile: str  # username whose profile page is measured
    detail: str  # post id whose detail page is measured


@dataclass(frozen=True)
class Target:
    name: str
    path: str
    articles: int  # <article data-post-id> the page must hold, checked before measuring
    # A header sent instead of the session cookie (an API client's bearer token): the
    # answer is then a JSON list of ``articles`` statuses.
    header: str | None = None


def check_database() -> None:
    """A dedicated PostgreSQL database: its name contains 'bench' (the world may be dropped)."""
    if connection.vendor != "postgresql":
        raise HttpBenchError("bench_http needs PostgreSQL (DATABASE_URL=postgres://...).")
    name = connection.settings_dict["NAME"]
    if "bench" not in name:
        raise HttpBenchError(
            f"Database {name!r}: bench_http writes a world and may empty the users and posts "
            "tables, so it only runs on a database whose name contains 'bench'."
        )
    if not settings.REDIS_URL:
        raise HttpBenchError("bench_http measures the cached home page: set REDIS_URL.")


# --- The world ----------------------------------------------------------------


def ensure_world(spec: HttpSpec, *, rebuild: bool, log: Log) -> World:
    """Reuse this command's world, or build it (in an empty database, or with ``rebuild``)."""
    reader = User.objects.filter(username=demo.DEMO_USERNAME).first()
    if reader is not None and reader.bio != spec.marker:
        if not rebuild:
            raise HttpBenchError(
                "this database holds another world (demo's bio: "
                f"{reader.bio[:80]!r}); pass --rebuild-world to replace it"
            )
        log("dropping the old world")
        with connection.cursor() as db:
            db.execute(
                "TRUNCATE accounts_user, accounts_usernameclaim, accounts_emailclaim, "
                "posts_post, timelines_inboxentry CASCADE"
            )
        reader = None
    elif reader is None and User.objects.exists():
        raise HttpBenchError("this database has users but no bench_http world: use an empty one")
    if reader is None:
        started = time.perf_counter()
        with tasks_in_process(True):
            _build_world(spec, log)
        log(f"  world built in {time.perf_counter() - started:.1f} s")
    else:
        log(f"Reusing the world: {spec.marker}")
    # Autovacuum is off on these machines: without statistics a fresh world's
    # entries statement scanned the users table once per post (44 ms a page).
    started = time.perf_counter()
    with connection.cursor() as db:
        db.execute("VACUUM ANALYZE")
    log(f"  VACUUM ANALYZE in {time.perf_counter() - started:.1f} s")
    return _load_world()


def _build_world(spec: HttpSpec, log: Log) -> None:
    report = demo.build_world(users=spec.users, posts_per_user=spec.posts_per_user, seed=spec.seed)
    log(f"  demo world: {report.users:,} users, {report.follows:,} follows, {report.posts:,} posts")
    reader = User.objects.get(username=demo.DEMO_USERNAME)
    followed = set(_followees(reader))
    # The most prolific accounts first: the profile page needs a full page of posts.
    candidates = (
        User.objects.exclude(pk=reader.pk)
        .exclude(pk__in=followed)
        .filter(posts_count__gt=0)
        .order_by("-posts_count", "pk")
    )
    for person in candidates[: max(0, spec.following - len(followed))]:
        relations_services.follow(follower=reader, followee=person)
    reader.refresh_from_db()
    person = _profile_person(reader)
    elsewhere = Post.objects.filter(author_id__in=_followees(reader)).exclude(author=person)
    parent = elsewhere.order_by("-timeline_key").first()
    # The detail page: a reply (one ancestor above it) with a page of replies below.
    post = posts_services.create_post(
        author=person, text=f"Replying to @{parent.author.username}: a thread.", in_reply_to=parent
    )
    repliers = User.objects.exclude(pk=person.pk).order_by("pk")[: spec.replies]
    for n, replier in enumerate(repliers):
        posts_services.create_post(
            author=replier, text=f"Reply {n} to @{person.username}.", in_reply_to=post
        )
    for n in range(3):
        posts_services.create_post(author=reader, text=f"My post {n}, hello @{person.username}.")
    # What the reader did to the posts of page 1: likes and reposts (marks on the page).
    page = home_feed(reader=reader, cursor=Cursor())
    for n, item in enumerate(page.items):
        if n % 3 == 0:
            posts_services.like(user=reader, post=item.post)
        if n % 7 == 3 and item.post.author_id != reader.pk:
            posts_services.repost(user=reader, post=item.post)
    User.objects.filter(pk=reader.pk).update(bio=spec.marker)  # last: the world is complete
    log(f"  reader {reader.username} follows {reader.following_count}; profile @{person.username}")


def _followees(reader: User) -> list[int]:
    return list(Followee.objects.filter(user_id=reader.pk).values_list("followee_id", flat=True))


def _profile_person(reader: User) -> User | None:
    """The followee with the most posts (a full profile page), the same on every run."""
    return User.objects.filter(pk__in=_followees(reader)).order_by("-posts_count", "pk").first()


def _load_world() -> World:
    reader = User.objects.get(username=demo.DEMO_USERNAME)
    person = _profile_person(reader)
    detail = (
        Post.objects.filter(author=person, in_reply_to__isnull=False, deleted_at__isnull=True)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    if person is None or detail is None:
        raise HttpBenchError("the world is incomplete: pass --rebuild-world")
    # A read fills the reader's Redis cache: the home page is measured warm.
    home_feed(reader=reader, cursor=Cursor())
    return World(reader=reader.username, profile=person.username, detail=detail)


def targets(world: World, spec: HttpSpec) -> list[Target]:
    return [
        Target("bare page", "/bench/bare/", 20),
        Target("home page 1", "/", 20),
        Target("profile page", f"/@{world.profile}/", 20),
        Target("detail page", f"/posts/{world.detail}/", spec.replies + 2),
    ]


def session_cookie(username: str) -> str:
    """A signed-in session for ``username`` in the site's session store, as a Cookie header."""
    client = Client()
    client.force_login(User.objects.get(username=username))
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


# --- The server ----------------------------------------------------------------


@dataclass
class Server:
    url: str
    master: subprocess.Popen
    log_path: Path

    def worker_pids(self) -> list[int]:
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.master.pid:  # field 4, ppid
                children.append(int(stat.parent.name))
        return children


@contextmanager
def gunicorn(*, workers: int, worker_class: str, threads: int, log: Log) -> Iterator[Server]:
    """gunicorn serving ``bench.http_settings`` (DEBUG off, rate limits off), stopped after."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.http_settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": settings.SECRET_KEY,
        "DEBUG": "0",
        "RATELIMIT_ENABLED": "0",
        # A page view queues nothing on a built inbox; if one did, it runs, not waits.
        "CELERY_TASK_ALWAYS_EAGER": "1",
    }
    command = [sys.executable, "-m", "gunicorn", "feed_project.wsgi:application"]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    command += ["--worker-class", worker_class, "--threads", str(threads), "--log-level", "warning"]
    log_path = Path(tempfile.mkstemp(prefix="bench-http-gunicorn-", suffix=".log")[1])
    with log_path.open("wb") as out:
        master = subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(url=f"http://127.0.0.1:{port}", master=master, log_path=log_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{server.url}/healthz", timeout=5).read()
                break
            except OSError:
                if master.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-2000:]
                    raise HttpBenchError(
                        f"gunicorn did not start; its log ({log_path}):\n{tail}"
                    ) from None
                time.sleep(0.2)
        log(
            f"  gunicorn pid {master.pid}: {workers} {worker_class} workers x {threads} "
            f"thread(s) on {server.url}; log: {log_path}"
        )
        yield server
    finally:
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
            try:
                os.killpg(master.pid, sig)
                master.wait(timeout=wait)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue


def fetch(
    server: Server, path: str, cookie: str, header: str | None = None
) -> tuple[int, str, list[str]]:
    """GET ``path`` with the cookie, or with ``header`` ("Name: value") instead."""
    name, value = header.split(": ", 1) if header else ("Cookie", cookie)
    request = urllib.request.Request(server.url + path, headers={name: value})
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read().decode()
        return response.status, body, response.headers.get_all("Set-Cookie") or []


def signed_in_cookie(server: Server, session: str) -> str:
    """The session cookie plus the CSRF cookie a browser would hold after its first page."""
    _, _, cookies = fetch(server, "/", session)
    csrf = [c.split(";", 1)[0] for c in cookies if c.startswith(settings.CSRF_COOKIE_NAME + "=")]
    return "; ".join([session, *csrf])


def check_pages(server: Server, pages: list[Target], cookie: str) -> None:
    """Every page answers 200, signed in, with the articles it should show."""
    for page in pages:
        status, body, _ = fetch(server, page.path, cookie, page.header)
        if page.header:
            found = len(json.loads(body)) if status == 200 else 0
            if status != 200 or found != page.articles:
                raise HttpBenchError(f"{page.path}: status {status}, {found} statuses")
            continue
        found = body.count("data-post-id=")
        if status != 200 or found != page.articles:
            raise HttpBenchError(
                f"{page.path}: status {status}, {found} articles (expected {page.articles})"
            )
        if page.path != "/bench/bare/" and "Log out" not in body:
            raise HttpBenchError(f"{page.path} was not served signed in")


# --- Measuring -----------------------------------------------------------------


@dataclass
class Sample:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    gunicorn_cpu: float
    postgres_cpu: float
    redis_cpu: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


@dataclass
class Figures:
    target: Target
    samples: list[Sample] = field(default_factory=list)


_WRK_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def parse_wrk(output: str) -> tuple[int, float, float, float]:
    """(requests, seconds, p50 ms, p99 ms) from ``wrk --latency``; errors raise."""
    done = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", output)
    p50 = re.search(r"^\s*50%\s+([\d.]+)(us|ms|s|m)\s*$", output, re.M)
    p99 = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s|m)\s*$", output, re.M)
    if not (done and p50 and p99):
        raise HttpBenchError(f"could not read wrk's output:\n{output}")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if bad:
        raise HttpBenchError(f"{bad.group(1)} responses were not 2xx:\n{output}")
    seconds = float(done.group(2)) * _WRK_UNITS[done.group(3)] / 1000
    return (
        int(done.group(1)),
        seconds,
        float(p50.group(1)) * _WRK_UNITS[p50.group(2)],
        float(p99.group(1)) * _WRK_UNITS[p99.group(2)],
    )


def _cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each process still there."""
    seconds = {pid: cpu.own_seconds(pid) for pid in pids}
    return {pid: spent for pid, spent in seconds.items() if spent is not None}


def _spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU spent between two readings by the processes of the second (new ones: all of it).

    A process gone meanwhile (a database connection closed at CONN_MAX_AGE)
    takes what it spent with it: the figure is a floor.
    """
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())


def _postgres_backends() -> list[int]:
    """Backends connected to this database, this process's own aside: the workers'."""
    with connection.cursor() as db:
        db.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in db.fetchall()]


def _redis_cpu(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def drive(
    server: Server,
    page: Target,
    cookie: str,
    *,
    seconds: float,
    connections: int,
    redis_client: redis.Redis,
) -> Sample:
    """wrk on one page for ``seconds``, with the CPU the server side spent meanwhile."""
    workers = server.worker_pids()
    before = (_cpu_seconds(workers), _cpu_seconds(_postgres_backends()), _redis_cpu(redis_client))
    command = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency"]
    header = page.header or f"Cookie: {cookie}"
    command += ["--timeout", "10s", "-H", header, server.url + page.path]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    after = (_cpu_seconds(workers), _cpu_seconds(_postgres_backends()), _redis_cpu(redis_client))
    requests, elapsed, p50, p99 = parse_wrk(output)
    return Sample(
        requests=requests,
        seconds=elapsed,
        p50_ms=p50,
        p99_ms=p99,
        gunicorn_cpu=_spent(before[0], after[0]),
        postgres_cpu=_spent(before[1], after[1]),
        redis_cpu=after[2] - before[2],
    )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass(frozen=True)
class RunOptions:
    seconds: int = 10
    rounds: int = 3
    warmup: int = 3
    connections: int = 4
    workers: int = 2
    worker_class: str = "sync"
    threads: int = 1


def run(
    world: World,
    spec: HttpSpec,
    options: RunOptions,
    *,
    log: Log,
    pages: list[Target] | None = None,
) -> list[Figures]:
    """Each page (``targets``' unless given) driven in turn, round after round."""
    if shutil.which("wrk") is None:
        raise HttpBenchError(
            "bench_http drives the pages with wrk: `apt-get install wrk` (or `make wrk`)."
        )
    pages = pages or targets(world, spec)
    session = session_cookie(world.reader)
    redis_client = redis.Redis.from_url(settings.REDIS_URL)
    figures = [Figures(page) for page in pages]
    with gunicorn(
        workers=options.workers,
        worker_class=options.worker_class,
        threads=options.threads,
        log=log,
    ) as server:
        cookie = signed_in_cookie(server, session)
        check_pages(server, pages, cookie)
        log(f"  pages checked: 200, signed in as {world.reader}, the expected articles")
        for page in pages:
            drive(
                server,
                page,
                cookie,
                seconds=options.warmup,
                connections=options.connections,
                redis_client=redis_client,
            )
        log(f"  warmed up ({options.warmup:g} s a page); load average {load()}")
        for n in range(options.rounds):
            for figure in figures:
                figure.samples.append(
                    drive(
                        server,
                        figure.target,
                        cookie,
                        seconds=options.seconds,
                        connections=options.connections,
                        redis_client=redis_client,
                    )
                )
            rates = ", ".join(f"{f.target.name} {f.samples[-1].rps:,.0f}" for f in figures)
            log(f"  round {n + 1}: req/s {rates}; load average {load()}")
    return figures


def report(figures: list[Figures], options: RunOptions) -> list[str]:
    """The table: medians over rounds of req/s, p50 and p99; CPU per request over all rounds."""
    header = (
        "page",
        "path",
        "req/s",
        "p50",
        "p99",
        "cpu/req gunicorn",
        "postgres",
        "redis (server)",
        "vs bare",
        "cpu vs bare",
    )
    bare = figures[0]

    def cpu_per_request(figure: Figures) -> float:
        """Gunicorn workers' and PostgreSQL backends' CPU seconds per request."""
        spent = sum(s.gunicorn_cpu + s.postgres_cpu for s in figure.samples)
        return spent / sum(s.requests for s in figure.samples)

    rows = []
    for figure in figures:
        samples = figure.samples
        requests = sum(s.requests for s in samples)
        ratios = [s.rps / b.rps for s, b in zip(samples, bare.samples, strict=True)]
        rows.append(
            (
                figure.target.name,
                figure.target.path,
                f"{statistics.median(s.rps for s in samples):,.0f}",
                f"{statistics.median(s.p50_ms for s in samples):.1f} ms",
                f"{statistics.median(s.p99_ms for s in samples):.1f} ms",
                f"{sum(s.gunicorn_cpu for s in samples) / requests * 1000:.2f} ms",
                f"{sum(s.postgres_cpu for s in samples) / requests * 1000:.2f} ms",
                f"{sum(s.redis_cpu for s in samples) / requests * 1000:.2f} ms",
                f"{statistics.median(ratios):.2f}x",
                f"{cpu_per_request(figure) / cpu_per_request(bare):.2f}x",
            )
        )
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(
            str(c).ljust(w) if i < 2 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    home = statistics.median(
        s.rps / b.rps for s, b in zip(figures[1].samples, bare.samples, strict=True)
    )
    lines += [
        f"  * {options.rounds} rounds of {options.seconds:g} s a page, pages alternating; "
        f"wrk -t1 -c{options.connections}; req/s, p50, p99 and 'vs bare' (req/s over the "
        "bare page's in the same round) are medians over rounds; 'cpu vs bare': gunicorn + "
        "postgres CPU per request over the bare page's",
        "  * cpu/req: user+system CPU of the gunicorn workers and of this database's "
        "PostgreSQL backends over all rounds, per request; redis: the whole server's "
        "(other clients of it included)",
        f"Target: home page 1 at least 0.50x the bare page's req/s: {home:.2f}x, "
        + ("met" if home >= 0.5 else "not met"),
    ]
    return lines
