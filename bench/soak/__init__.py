"""The soak: the site in its production shape, people's traffic over HTTP, faults, then checks.

``bench.soak.services`` starts everything on free ports: a PostgreSQL cluster
of its own (initdb in a temporary directory, migrated), a cache redis-server
without persistence, a broker redis-server with an append-only file, a Celery
worker of two processes and beat (so the sweeper and the trims run, both
tuned short: ``SoakSpec``), gunicorn with two workers, rate limits off, a
small inbox cap. ``bench.soak.clients`` signs up N clients that post, read
their home page and its next page, follow and unfollow each other, like,
repost and delete their own posts until the time is up. Meanwhile the eight
faults of ``FAULTS`` come one by one, spread evenly over the run, each with
its window (start, and end as its service is back); the kills that lose or
hand out messages again wait for a fan-out chunk to hit (``Services.aim``).

Then ``bench.soak.check`` waits for the site to drain by itself (no pending
task, no unfinished fan-out, nothing in the broker) and checks, on the run's
own database: every accepted post is there; every client's whole home feed,
walked over HTTP as the client (as cached, then from an empty cache), equals
``timelines.home.pull_model.pull_reference_keys``; 5xx outside PostgreSQL faults,
and inside them 503s against 500s; the slowest request outside PostgreSQL
faults; for each fault the delivery lag of the posts made right after it.
``bench.soak.report`` has the targets.
"""

import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench.soak import check
from bench.soak.clients import Accepted, Client, Request
from bench.soak.report import Fault, Report
from bench.soak.services import Services
from bench.soak.spec import Log, SoakSpec

__all__ = ["FAULTS", "Report", "SoakSpec", "run"]

# In turn, as a run from outside did them: (name, which service, what is done).
FAULTS = (
    ("pg_restart", "database", "PostgreSQL: pg_ctl restart -m fast"),
    ("pg_crash", "database", "PostgreSQL: stop -m immediate, then start"),
    ("cache_pause", "cache", "SIGSTOP of the cache Redis, SIGCONT after the pause"),
    ("broker_pause", "broker", "SIGSTOP of the broker, SIGCONT after the pause"),
    ("broker_kill", "broker", "SIGKILL of the broker, restarted on its append-only file"),
    ("broker_wipe", "broker", "SIGKILL of the broker, restarted empty (queued messages lost)"),
    ("worker_kill", "worker", "SIGKILL of the Celery worker's process group, a new worker"),
    ("cache_kill", "cache", "SIGKILL of the cache Redis, restarted empty"),
)


class Run:
    def __init__(self, spec: SoakSpec, services: Services, log: Log) -> None:
        self.spec = spec
        self.services = services
        self.log = log
        self.tag = uuid.uuid4().hex[:6]
        self.report = Report(spec)
        self.usernames: list[str] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self.clients: list[Client] = []
        self.ended_wall = 0.0
        self._down: set[str] = set()

    def look_for_exits(self, when: str) -> None:
        """Report each service found no longer running (a process died by itself, or a
        fault did not bring its service back), once until it runs again: a worker
        that died is found before the next fault, even if that fault replaces it."""
        down = set(self.services.exited())
        for name in sorted(down - self._down):
            self.log(f"  {self.at()}: {name} is not running")
            self.report.exited.append(f"{name} ({when})")
        self._down = down

    def record(self, request: Request) -> None:
        with self._lock:
            self.report.requests.append(request)

    def accepted(self, post: Accepted) -> None:
        with self._lock:
            self.report.accepted.append(post)

    def at(self) -> str:
        return f"{time.monotonic() - self.report.started:6.1f} s"

    def fault(self, name: str, kind: str) -> None:
        self.look_for_exits(f"found before {name}")
        held = self.services.aim(name)
        self.log(f"  {self.at()}: fault {name}" + ("" if held is None else f" ({held} held)"))
        fault = Fault(name, kind, time.monotonic(), time.time(), held=held)
        self.report.faults.append(fault)
        try:
            self.services.fault(name)
        except Exception as exc:  # reported: the run goes on to its checks
            fault.error = repr(exc)
        fault.ended, fault.ended_wall = time.monotonic(), time.time()
        self.log(f"  {self.at()}: {name} over" + (f" ({fault.error})" if fault.error else ""))

    def traffic(self) -> None:
        self.clients = [
            Client(
                n, port=self.services.http_port, tag=self.tag, seed=self.spec.seed,
                usernames=self.usernames, stopping=self.stopping, record=self.record,
                accepted=self.accepted,
            )
            for n in range(self.spec.clients)
        ]  # fmt: skip
        self.report.started = started = time.monotonic()
        for client in self.clients:
            client.start()
        faults = FAULTS if self.spec.faults else ()
        for i, (name, kind, _) in enumerate(faults):
            due = started + (i + 1) * self.spec.seconds / (len(faults) + 1)
            time.sleep(max(0.0, due - time.monotonic()))
            self.fault(name, kind)
        time.sleep(max(0.0, started + self.spec.seconds - time.monotonic()))
        self.stopping.set()
        for client in self.clients:
            client.join(timeout=60)
        self.ended_wall = time.time()
        self.log(f"  {self.at()}: clients stopped")

    def settle_and_check(self) -> None:
        report = self.report
        with check.on_database(self.services.postgres.url):
            check.drain(self.services, report)
            self.log(f"  {self.at()}: drain over ({report.left})")
            check.check_posts(self.clients, report)
            check.check_feeds(self.clients, self.services, report)
            check.check_lags(report, self.ended_wall)
        report.trims = check.count_trims(self.services)
        report.repaired = check.count_repairs(self.services)
        self.look_for_exits("found at the end")


def run(spec: SoakSpec, *, log: Log) -> Report:
    """Start the services, run the traffic and faults, drain, check; always stop the services."""
    spec.check()
    logs = Path(tempfile.mkdtemp(prefix="soak-"))
    services = Services(spec, logs, log)
    soak = Run(spec, services, log)
    try:
        services.start()
        log(f"{spec.clients} clients for {spec.seconds:g} s (run {soak.tag})")
        soak.traffic()
        soak.settle_and_check()
    except BaseException:
        log(f"logs kept in {logs}")
        raise
    finally:
        services.stop()
    if soak.report.missed():
        log(f"logs kept in {logs}")
    else:
        shutil.rmtree(logs, ignore_errors=True)
    return soak.report
