"""The soak benchmark of issue 10: mixed traffic over HTTP for minutes, with faults, then a check.

It starts everything it needs on free ports, against the command's (dedicated)
database: a cache redis-server without persistence, a broker redis-server with
persistence (append-only file), a Celery worker and gunicorn (2 sync workers),
with rate limits off. N client threads sign up and then, until the time is up,
post, follow and unfollow each other, like, repost, read home pages (and the
next page), and now and then log out and in again. A schedule of faults runs
meanwhile (at a quarter, half and three quarters of the time):

1. ``worker``: SIGKILL the Celery worker's process group, start a new one
   (tasks it held unacknowledged are redelivered after the visibility timeout);
2. ``cache``: SIGKILL the cache redis-server and start it again, empty;
3. ``gunicorn``: SIGKILL one gunicorn worker (the master starts another).

Then it stops the clients, waits for the broker's queue to drain, runs the
fan-out sweeper (for posts of any age) in process, and checks:

- every post a client saw accepted (302) exists (else it is *lost*);
- every client's home feed, walked page by page (``timelines.feed.home_feed``
  on the same cache Redis), equals ``timelines.reference.pull_reference_keys``
  (else the feed *differs*);
- 5xx answers and failed connections, apart from those in flight at a kill;
- recovery after each fault: seconds until the first request started after
  it succeeds, and for the worker until the first post accepted after it has
  finished its fan-out.
"""

import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

import redis
from django.conf import settings
from django.test.utils import override_settings

from accounts.models import User
from bench.processes import database_url, free_port
from feed_project.celery import app as celery_app
from feed_project.pagination import Cursor
from posts.models import Post
from timelines import fanout
from timelines.feed import home_feed
from timelines.models import FanOut
from timelines.reference import pull_reference_keys
from timelines.tasks import fan_out_post

Log = Callable[[str], None]

START_SECONDS = 30
DRAIN_SECONDS = 120
PASSWORD = "soak-password-long-enough-7"
# A SIGKILLed worker's unacknowledged tasks go back on the queue after this
# long (the broker's visibility timeout), checked every second; a restore
# lock left by the killed worker expires in 5 s.
REDELIVER_SECONDS = 10
WORKER_BOOTSTRAP = """
import json, os, sys
from feed_project.celery import app
app.conf.broker_transport_options = {
    **app.conf.broker_transport_options, **json.loads(os.environ["SOAK_TRANSPORT_OPTIONS"]),
}
sys.exit(app.worker_main(["worker", *sys.argv[1:]]))
"""
TRANSPORT_OPTIONS = {
    "visibility_timeout": REDELIVER_SECONDS,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 5,
}
# What a client does next, and how often (weights).
ACTIONS = {
    "read_home": 30,
    "read_next_page": 8,
    "post": 22,
    "follow": 12,
    "unfollow": 5,
    "like": 10,
    "repost": 6,
    "relogin": 2,
}


@dataclass(frozen=True)
class SoakSpec:
    clients: int = 6
    seconds: float = 120.0
    faults: bool = True
    seed: int = 10


@dataclass
class Request:
    client: int
    started: float  # time.monotonic()
    ended: float
    method: str
    path: str
    status: int  # 0: the connection failed or was cut


@dataclass
class Fault:
    name: str
    at: float  # time.monotonic(), as the fault's action began
    wall: float  # time.time()
    # time.monotonic() as the action returned: the kill itself lands in between
    # (finding the gunicorn worker to kill takes a /proc scan first).
    done: float = 0.0


@dataclass
class Report:
    requests: list[Request] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    accepted: list[tuple[float, str]] = field(default_factory=list)  # (wall time, text)
    lost: list[str] = field(default_factory=list)
    differing: dict[str, tuple[int, int]] = field(default_factory=dict)  # user: (got, expected)
    readers: int = 0
    swept: int = 0
    drained_in: float = 0.0

    def in_flight_at_a_kill(self, request: Request) -> bool:
        """Whether the request was open while a gunicorn worker was being killed."""
        return any(
            fault.name == "gunicorn" and request.started <= fault.done and fault.at <= request.ended
            for fault in self.faults
        )

    def failed(self) -> list[Request]:
        return [r for r in self.requests if r.status == 0 or r.status >= 500]

    def failed_outside_kills(self) -> list[Request]:
        return [r for r in self.failed() if not self.in_flight_at_a_kill(r)]

    def lines(self) -> list[str]:
        failed = self.failed()
        in_flight = [r for r in failed if self.in_flight_at_a_kill(r)]
        by_kind: dict[str, int] = {}
        for r in self.requests:
            by_kind[r.method] = by_kind.get(r.method, 0) + 1
        out = [
            f"requests         {len(self.requests)} "
            f"({', '.join(f'{n} {kind}' for kind, n in sorted(by_kind.items()))})",
            f"5xx or cut       {len(failed)} ({len(in_flight)} in flight at a kill, "
            f"{len(failed) - len(in_flight)} outside)",
            f"posts accepted   {len(self.accepted)}",
            f"lost posts       {len(self.lost)}",
            f"feeds differing  {len(self.differing)} of {self.readers}",
            f"queue drained in {self.drained_in:.1f} s; swept {self.swept} unfinished fan-outs",
        ]
        for fault in self.faults:
            out.append(f"fault {fault.name:<9}  recovered in {self._recovery(fault)}")
        for request in failed[:10]:
            where = "in flight at a kill" if self.in_flight_at_a_kill(request) else "OUTSIDE"
            out.append(f"  {request.status or 'cut'} {request.method} {request.path} ({where})")
        for name, (got, expected) in list(self.differing.items())[:10]:
            out.append(f"  feed of {name}: {got} items, reference {expected}")
        return out

    def _recovery(self, fault: Fault) -> str:
        after = [r for r in self.requests if r.started >= fault.at and 0 < r.status < 500]
        first_ok = min((r.ended for r in after), default=None)
        text = "no request after it" if first_ok is None else f"{first_ok - fault.at:.2f} s"
        if fault.name == "worker":
            texts = [t for wall, t in self.accepted if wall >= fault.wall]
            # The posts first, then their fan-outs by id: on Citus a fan-out row
            # is on its post id's shard, not its author's, and a join is refused.
            posts = list(Post.objects.filter(text__in=texts).values_list("id", flat=True))
            finished = (
                FanOut.objects.filter(post_id__in=posts, finished_at__isnull=False)
                .order_by("finished_at")
                .values_list("finished_at", flat=True)
                .first()
            )
            if finished is not None:
                seconds = finished.timestamp() - fault.wall
                text += f" (first fan-out after it done in {seconds:.2f} s)"
        return text


# --- services on free ports ----------------------------------------------------


def wait_for(check: Callable[[], bool], what: str, timeout: float = START_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


class Services:
    """The servers of one run; every process is started here and stopped by ``stop``."""

    def __init__(self, directory: Path, log: Log) -> None:
        self.dir = directory
        self.log = log
        self.cache_port, self.broker_port, self.http_port = free_port(), free_port(), free_port()
        self.cache: subprocess.Popen | None = None
        self.broker: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.gunicorn: subprocess.Popen | None = None
        self.workers_started = 0

    @property
    def cache_url(self) -> str:
        return f"redis://127.0.0.1:{self.cache_port}/0"

    @property
    def broker_url(self) -> str:
        return f"redis://127.0.0.1:{self.broker_port}/0"

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "feed_project.settings",
            "DATABASE_URL": database_url(),
            "REDIS_URL": self.cache_url,
            "CELERY_BROKER_URL": self.broker_url,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "CELERY_VISIBILITY_TIMEOUT": str(REDELIVER_SECONDS),
            "RATELIMIT_ENABLED": "0",
            "SECRET_KEY": settings.SECRET_KEY,
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            "SOAK_TRANSPORT_OPTIONS": json.dumps(TRANSPORT_OPTIONS),
            "PYTHONUNBUFFERED": "1",
        }

    def _redis(self, port: int, *options: str) -> subprocess.Popen:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        directory = self.dir / f"redis-{port}"
        directory.mkdir(exist_ok=True)
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=port, socket_timeout=1, socket_connect_timeout=1)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_for(answers, f"redis-server on port {port}")
        return process

    def start_cache(self) -> None:
        self.cache = self._redis(self.cache_port, "--save", "", "--appendonly", "no")

    def start(self) -> None:
        self.start_cache()
        self.broker = self._redis(
            self.broker_port, "--save", "", "--appendonly", "yes", "--appendfsync", "always"
        )
        self.start_worker()
        log_file = (self.dir / "gunicorn.log").open("ab")
        self.gunicorn = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "feed_project.wsgi", "-b",
             f"127.0.0.1:{self.http_port}", "-w", "2", "--timeout", "30",
             "--graceful-timeout", "5"],
            cwd=settings.BASE_DIR, env=self.environment(), stdout=log_file,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        wait_for(self._http_answers, "gunicorn")
        self.log(
            f"services: cache {self.cache_url}, broker {self.broker_url} (append-only), "
            f"gunicorn 127.0.0.1:{self.http_port} (2 workers), Celery worker; logs in {self.dir}"
        )

    def _http_answers(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=2)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    def start_worker(self) -> None:
        self.workers_started += 1
        name = f"soak{os.getpid()}-{self.workers_started}@%h"
        log_file = (self.dir / f"worker-{self.workers_started}.log").open("ab")
        self.worker = subprocess.Popen(
            [sys.executable, "-c", WORKER_BOOTSTRAP, "--pool=prefork", "--concurrency=2",
             "-n", name, "-l", "info", "--without-gossip", "--without-mingle"],
            cwd=settings.BASE_DIR, env=self.environment(), stdout=log_file,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        path = self.dir / f"worker-{self.workers_started}.log"
        wait_for(lambda: " ready." in path.read_text(errors="replace"), "the Celery worker")

    # --- faults --------------------------------------------------------------

    def kill_worker(self) -> None:
        assert self.worker is not None
        _kill_group(self.worker, signal.SIGKILL)
        self.start_worker()

    def restart_cache(self) -> None:
        assert self.cache is not None
        self.cache.kill()  # SIGKILL: nothing saved (it saves nothing anyway)
        self.cache.wait(timeout=10)
        self.start_cache()

    def kill_gunicorn_worker(self) -> None:
        assert self.gunicorn is not None
        children = _children(self.gunicorn.pid)
        if children:
            os.kill(children[0], signal.SIGKILL)

    # --- the end ---------------------------------------------------------------

    def broker_client(self) -> redis.Redis:
        return redis.Redis(port=self.broker_port, socket_timeout=5)

    def drained(self) -> bool:
        broker = self.broker_client()
        return broker.llen("celery") == 0 and broker.hlen("unacked") == 0

    def stop(self) -> None:
        for process in (self.gunicorn, self.worker):
            if process is not None:
                _kill_group(process, signal.SIGTERM, then_kill_after=15)
        for process in (self.cache, self.broker):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=10)


def _kill_group(process: subprocess.Popen, sig: int, then_kill_after: float = 0) -> None:
    try:
        os.killpg(process.pid, sig)
        process.wait(timeout=then_kill_after or 10)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        process.wait(timeout=10)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


# --- clients -------------------------------------------------------------------


class Browser:
    """One person's HTTP session: cookies, the CSRF token, no redirects followed."""

    def __init__(self, port: int, client: int, record: Callable[[Request], None]) -> None:
        self.port = port
        self.client = client
        self.record = record
        self.cookies: dict[str, str] = {}
        self.location = ""  # the last answer's Location header

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, str]:
        headers = {"Host": "127.0.0.1"}
        body = None
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if form is not None:
            form = {**form, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        started = time.monotonic()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=35)
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode(errors="replace")
            status = response.status
            self.location = response.getheader("Location", "")
            for header, value in response.getheaders():
                if header.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name.strip()] = rest.split(";", 1)[0]
            connection.close()
        except OSError:
            status, text, self.location = 0, "", ""
        self.record(Request(self.client, started, time.monotonic(), method, path, status))
        return status, text

    def get(self, path: str) -> tuple[int, str]:
        return self.request("GET", path)

    def post(self, path: str, form: dict[str, str] | None = None) -> int:
        if "csrftoken" not in self.cookies:
            self.get("/accounts/login/")
        return self.request("POST", path, form or {})[0]


POST_ID = re.compile(r'data-post-id="([0-9A-Za-z]+)"')
NEXT = re.compile(r'<a rel="next" href="([^"]+)"')


class Client(threading.Thread):
    def __init__(self, number: int, run: "Run") -> None:
        super().__init__(name=f"soak-client-{number}", daemon=True)
        self.number = number
        self.run_ = run
        self.random = random.Random(run.spec.seed * 1000 + number)
        self.browser = Browser(run.services.http_port, number, run.record)
        self.username = f"soak{run.tag}c{number}"
        self.seen_posts: list[str] = []
        self.next_page: str | None = None
        self.posts = 0

    def run(self) -> None:
        self.sign_up()
        actions, weights = list(ACTIONS), list(ACTIONS.values())
        while not self.run_.stopping.is_set():
            getattr(self, self.random.choices(actions, weights)[0])()

    def sign_up(self) -> None:
        for _ in range(20):
            self.browser.get("/accounts/signup/")
            status = self.browser.post(
                "/accounts/signup/",
                {"username": self.username, "display_name": self.username,
                 "email": f"{self.username}@soak.invalid",
                 "password1": PASSWORD, "password2": PASSWORD},
            )  # fmt: skip
            # A 400 after a cut answer: signed up already, so log in.
            if status == 302 or (status == 400 and self.relogin() == 302):
                break
            time.sleep(0.2)
        self.run_.usernames.append(self.username)

    def relogin(self) -> int:
        self.browser.post("/accounts/logout/")
        self.browser.get("/accounts/login/")
        return self.browser.post(
            "/accounts/login/", {"username": self.username, "password": PASSWORD}
        )

    def read_home(self) -> None:
        status, text = self.browser.get("/")
        if status == 200:
            self.seen_posts = POST_ID.findall(text)[:20] or self.seen_posts
            found = NEXT.search(text)
            self.next_page = found.group(1).replace("&amp;", "&") if found else None

    def read_next_page(self) -> None:
        if self.next_page:
            self.browser.get("/" + self.next_page.lstrip("/"))
        else:
            self.read_home()

    def post(self) -> None:
        self.posts += 1
        text = f"soak {self.run_.tag} client {self.number} post {self.posts}"
        status = self.browser.post("/posts/new/", {"text": text})
        if status == 302 and self.browser.location.startswith("/accounts/login/"):
            # Signed out (a log-in answer cut by a kill never set the cookie):
            # refused, not accepted; sign in again.
            self.relogin()
        elif status == 302:
            self.run_.accepted(text)

    def _someone(self) -> str | None:
        others = [name for name in self.run_.usernames if name != self.username]
        return self.random.choice(others) if others else None

    def follow(self) -> None:
        if (someone := self._someone()) is not None:
            self.browser.post(f"/@{someone}/follow/")

    def unfollow(self) -> None:
        if (someone := self._someone()) is not None:
            self.browser.post(f"/@{someone}/unfollow/")

    def like(self) -> None:
        if self.seen_posts:
            self.browser.post(f"/posts/{self.random.choice(self.seen_posts)}/like/")

    def repost(self) -> None:
        if self.seen_posts:
            self.browser.post(f"/posts/{self.random.choice(self.seen_posts)}/repost/")


# --- the run -------------------------------------------------------------------


class Run:
    def __init__(self, spec: SoakSpec, services: Services, log: Log) -> None:
        self.spec = spec
        self.services = services
        self.log = log
        self.tag = uuid.uuid4().hex[:6]
        self.report = Report()
        self.usernames: list[str] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    def record(self, request: Request) -> None:
        with self._lock:
            self.report.requests.append(request)

    def accepted(self, text: str) -> None:
        with self._lock:
            self.report.accepted.append((time.time(), text))

    def fault(self, name: str, action: Callable[[], None]) -> None:
        self.log(f"  {time.monotonic() - self.started:5.1f} s: fault {name}")
        fault = Fault(name, time.monotonic(), time.time())
        self.report.faults.append(fault)
        action()
        fault.done = time.monotonic()

    def traffic(self) -> None:
        services = self.services
        schedule = [
            (0.25, "worker", services.kill_worker),
            (0.50, "cache", services.restart_cache),
            (0.75, "gunicorn", services.kill_gunicorn_worker),
        ]
        clients = [Client(n, self) for n in range(self.spec.clients)]
        self.started = time.monotonic()
        for client in clients:
            client.start()
        for share, name, action in schedule if self.spec.faults else []:
            time.sleep(max(0.0, self.started + share * self.spec.seconds - time.monotonic()))
            self.fault(name, action)
        time.sleep(max(0.0, self.started + self.spec.seconds - time.monotonic()))
        self.stopping.set()
        for client in clients:
            client.join(timeout=60)
        self.log(f"  {time.monotonic() - self.started:5.1f} s: clients stopped")

    def settle(self) -> None:
        """Drain the queue, then sweep unfinished fan-outs of any age, in process."""
        started = time.monotonic()

        def drained_twice() -> bool:
            # Twice, apart: a message between BRPOP and the unacked store is in neither.
            if not self.services.drained():
                return False
            time.sleep(0.3)
            return self.services.drained()

        wait_for(drained_twice, "the broker's queue to drain", timeout=DRAIN_SECONDS)
        self.report.drained_in = time.monotonic() - started
        with on_the_cache(self.services.cache_url), tasks_in_process():
            for post_id in fanout.undelivered_posts(older_than=timedelta(0)):
                fan_out_post.apply(args=[post_id], throw=True)
                self.report.swept += 1

    def check(self) -> None:
        texts = [text for _, text in self.report.accepted]
        found = set(Post.objects.filter(text__in=texts).values_list("text", flat=True))
        self.report.lost = [text for text in texts if text not in found]
        with on_the_cache(self.services.cache_url), tasks_in_process():
            readers = User.objects.filter(username__in=self.usernames)
            self.report.readers = len(readers)
            for reader in readers:
                expected = pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=10**9)
                got = walk_home_feed(reader)
                if got != expected:
                    self.report.differing[reader.username] = (len(got), len(expected))


def walk_home_feed(reader: User) -> list[str]:
    keys: list[str] = []
    cursor = Cursor()
    while True:
        page = home_feed(reader=reader, cursor=cursor)
        keys += [item.key for item in page.items]
        if page.older is None:
            return keys
        cursor = Cursor(before=page.older)


@contextmanager
def on_the_cache(url: str) -> Iterator[None]:
    """This process's cache (and inbox caches) on the run's cache Redis."""
    caches = {**settings.CACHES}
    caches["default"] = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "OPTIONS": {"IGNORE_EXCEPTIONS": True},
    }
    with override_settings(REDIS_URL=url, CACHES=caches):
        yield


@contextmanager
def tasks_in_process() -> Iterator[None]:
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = previous


def run(spec: SoakSpec, *, log: Log) -> Report:
    """Start the services, run the traffic and faults, settle, check; always stop the services."""
    directory = Path(tempfile.mkdtemp(prefix="soak-"))
    services = Services(directory, log)
    soak = Run(spec, services, log)
    try:
        services.start()
        log(f"{spec.clients} clients for {spec.seconds:g} s (run {soak.tag})")
        soak.traffic()
        soak.settle()
        soak.check()
    finally:
        services.stop()
    report = soak.report
    if not report.lost and not report.differing and not report.failed_outside_kills():
        shutil.rmtree(directory, ignore_errors=True)
    else:
        log(f"logs kept in {directory}")
    return soak.report


def database_is_for_soak(name: str) -> bool:
    """A database named for it (its name contains 'soak'), or one the test runner made."""
    return "soak" in name or name.startswith("test_")
