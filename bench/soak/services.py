"""The site of one soak run in its production shape, on free ports, and the faults done to it.

README's "Running it for real": a PostgreSQL of its own (``bench.soak.postgres``),
a cache redis-server without persistence, a broker redis-server with an
append-only file, a Celery worker of two processes, beat, gunicorn with two
workers, rate limits off. Every process is started here and stopped by
``stop``; the faults are methods, each returning once the service is back.
"""

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import redis
from django.conf import settings

from bench.processes import SOON_REDELIVERED, WORKER_BOOTSTRAP, free_port
from bench.soak.postgres import Postgres
from bench.soak.spec import Log, SoakSpec

START_SECONDS = 120  # a loaded machine takes tens of seconds to start a worker


# The kills aimed at work in flight (``Services.aim``): the broker's messages
# they lose or send again, queued (its list) or delivered and not acknowledged
# (its unacked hash, which the worker holds).
AIMED = {
    "broker_kill": ("queued", "delivered"),
    "broker_wipe": ("queued", "delivered"),
    "worker_kill": ("delivered",),
}
AIM_SECONDS = 5.0


def wait_for(check: Callable[[], bool], what: str, timeout: float = START_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


class RedisServer:
    def __init__(self, name: str, logs: Path, *options: str) -> None:
        self.name = name
        self.port = free_port()
        self.dir = logs / name
        self.options = options
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, timeout: float = 5) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=timeout, socket_connect_timeout=timeout)

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.dir.mkdir(exist_ok=True)
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
             "--logfile", str(self.dir / "redis.log"), *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        client = self.client(timeout=1)

        def answers() -> bool:
            try:  # a server loading its append-only file answers LOADING: not yet
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_for(answers, f"the {self.name} redis-server")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL: whatever it had not written is gone
        self.process.wait(timeout=10)

    def pause(self, seconds: float) -> None:
        """SIGSTOP, then SIGCONT: connections stay open and nothing answers meanwhile."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            self.process.send_signal(signal.SIGCONT)

    def wipe(self) -> None:
        """Its files gone: the next start is empty."""
        log = (self.dir / "redis.log").read_bytes() if (self.dir / "redis.log").exists() else b""
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir()
        (self.dir / "redis.log").write_bytes(log)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a stop during a pause
            self.process.terminate()
            self.process.wait(timeout=10)


class Services:
    def __init__(self, spec: SoakSpec, logs: Path, log: Log) -> None:
        self.spec = spec
        self.logs = logs
        self.log = log
        self.postgres = Postgres()
        self.cache = RedisServer("cache", logs, "--save", "", "--appendonly", "no")
        self.broker = RedisServer(
            "broker", logs, "--save", "", "--appendonly", "yes", "--appendfsync", "always"
        )
        self.http_port = free_port()
        self.worker: subprocess.Popen | None = None
        self.beat: subprocess.Popen | None = None
        self.gunicorn: subprocess.Popen | None = None
        self.workers_started = 0

    def environment(self) -> dict[str, str]:
        spec = self.spec
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "feed_project.settings",
            "DATABASE_URL": self.postgres.url,
            "REDIS_URL": self.cache.url,
            "CELERY_BROKER_URL": self.broker.url,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "CELERY_VISIBILITY_TIMEOUT": str(spec.visibility_timeout),
            "FEED_SWEEP_AFTER_SECONDS": str(spec.sweep_after),
            "FEED_TRIM_EVERY_SECONDS": str(spec.trim_every),
            "FEED_INBOX_CAP": str(spec.inbox_cap),
            "RATELIMIT_ENABLED": "0",
            "SECRET_KEY": settings.SECRET_KEY,
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            "WORKER_TRANSPORT_OPTIONS": json.dumps(SOON_REDELIVERED),
            "PYTHONUNBUFFERED": "1",
        }

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        log_file = (self.logs / f"{name}.log").open("ab")
        return subprocess.Popen(
            command, cwd=settings.BASE_DIR, env=self.environment(), stdout=log_file,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def start(self) -> None:
        self.postgres.create()
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=settings.BASE_DIR, env=self.environment(), capture_output=True, timeout=600,
        )  # fmt: skip
        if migrate.returncode != 0:
            raise RuntimeError(f"migrate failed: {migrate.stderr.decode(errors='replace')}")
        self.cache.start()
        self.broker.start()
        self.start_worker()
        self.beat = self._spawn(
            "beat",
            [sys.executable, "-m", "celery", "-A", "feed_project", "beat", "-l", "info",
             "-s", str(self.logs / "beat-schedule"), "--pidfile", str(self.logs / "beat.pid")],
        )  # fmt: skip
        self.gunicorn = self._spawn(
            "gunicorn",
            [sys.executable, "-m", "gunicorn", "feed_project.wsgi", "-b",
             f"127.0.0.1:{self.http_port}", "-w", "2", "--timeout", "30",
             "--graceful-timeout", "5"],
        )  # fmt: skip
        wait_for(self._http_answers, "gunicorn")
        self.log(
            f"services: PostgreSQL {self.postgres.url}, cache {self.cache.url}, broker "
            f"{self.broker.url} (append-only), gunicorn 127.0.0.1:{self.http_port} "
            f"(2 workers), Celery worker (2 processes) and beat; logs in {self.logs}"
        )

    def _http_answers(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=2)
            connection.request("GET", "/healthz", headers={"Host": "127.0.0.1"})
            return connection.getresponse().status == 200
        except OSError:
            return False

    def start_worker(self) -> None:
        self.workers_started += 1
        name = f"worker-{self.workers_started}"
        self.worker = self._spawn(
            name,
            [sys.executable, "-c", WORKER_BOOTSTRAP, "--pool=prefork", "--concurrency=2",
             "-n", f"soak{os.getpid()}-{self.workers_started}@%h", "-l", "info",
             "--without-gossip", "--without-mingle"],
        )  # fmt: skip
        path = self.logs / f"{name}.log"
        wait_for(lambda: " ready." in path.read_text(errors="replace"), "the Celery worker")

    # --- faults: each returns once its service is back -------------------------

    def aim(self, name: str) -> int | None:
        """Before a kill that loses or returns messages: wait, up to ``AIM_SECONDS``, for
        the broker to hold a fan-out chunk the kill would hit; how many it held (None:
        the fault is not aimed).

        A busy site always has deliveries in flight, so a kill there always hits
        some; the soak's few clients leave the worker idle most of the time, and a
        kill at a random moment would mostly find nothing to lose or to hand out
        again.
        """
        keys = AIMED.get(name)
        if keys is None:
            return None
        broker = self.broker.client(timeout=1)
        deadline = time.monotonic() + AIM_SECONDS
        while True:
            try:
                messages = [
                    *(broker.lrange("celery", 0, -1) if "queued" in keys else []),
                    *(broker.hvals("unacked") if "delivered" in keys else []),
                ]
            except redis.RedisError:
                messages = []
            held = sum(b"fan_out_chunk" in message for message in messages)
            if held or time.monotonic() > deadline:
                return held
            time.sleep(0.002)

    def fault(self, name: str) -> None:
        pause = self.spec.pause_seconds
        actions: dict[str, Callable[[], None]] = {
            "pg_restart": self.postgres.restart_fast,
            "pg_crash": self.postgres.crash,
            "cache_pause": lambda: self.cache.pause(pause),
            "broker_pause": lambda: self.broker.pause(pause),
            "broker_kill": lambda: self._restart(self.broker, wipe=False),
            "broker_wipe": lambda: self._restart(self.broker, wipe=True),
            "worker_kill": self._kill_worker,
            "cache_kill": lambda: self._restart(self.cache, wipe=True),
        }
        actions[name]()

    def _restart(self, server: RedisServer, *, wipe: bool) -> None:
        server.kill()
        if wipe:
            server.wipe()
        server.start()

    def _kill_worker(self) -> None:
        assert self.worker is not None
        kill_group(self.worker, signal.SIGKILL)
        self.start_worker()

    # --- the end ---------------------------------------------------------------

    def broker_empty(self) -> bool:
        """No message queued, none delivered and unacknowledged (which would run again)."""
        try:
            broker = self.broker.client()
            return broker.llen("celery") == 0 and broker.hlen("unacked") == 0
        except redis.RedisError:
            return False

    def exited(self) -> list[str]:
        """The services that are no longer running (each should run to the end)."""
        processes = {
            "gunicorn": self.gunicorn,
            "worker": self.worker,
            "beat": self.beat,
            "cache": self.cache.process,
            "broker": self.broker.process,
        }
        gone = [name for name, p in processes.items() if p is None or p.poll() is not None]
        return gone + ([] if self.postgres.running() else ["postgresql"])

    def stop(self) -> None:
        for process in (self.gunicorn, self.beat, self.worker):
            if process is not None:
                kill_group(process, signal.SIGTERM, then_kill_after=15)
        self.cache.stop()
        self.broker.stop()
        if self.postgres.log_file.exists():
            shutil.copy(self.postgres.log_file, self.logs / "postgresql.log")
        self.postgres.destroy()


def kill_group(process: subprocess.Popen, sig: int, then_kill_after: float = 0) -> None:
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
