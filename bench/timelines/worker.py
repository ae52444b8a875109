"""Where the fan-out runs: a real Celery worker subprocess, or in process (eager tasks)."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from bench.processes import database_url
from bench.timelines.spec import Log, WorldError
from feed_project.celery import app as celery_app


@contextmanager
def celery_worker(
    *, threshold: int, log: Log, ready_timeout: float = 60
) -> Iterator[tuple[str, int]]:
    """A real worker (prefork, 2 processes) on this database and broker; stopped after.

    Yields its label and its pid (whose children are the pool's processes)."""
    if not settings.CELERY_BROKER_URL:
        raise WorldError("a worker needs a broker: set REDIS_URL (or run with --no-worker)")
    others = celery_app.control.ping(timeout=0.5)
    if others:
        log(f"  note: other workers answer on this broker and may share the fan-out: {others}")
    celery_app.control.purge()  # stale messages of an interrupted run
    name = f"bench{os.getpid()}@{socket.gethostname()}"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "FEED_BIG_ACCOUNT_FOLLOWERS": str(threshold),
    }
    command = [sys.executable, "-m", "celery", "-A", "feed_project", "worker"]
    command += ["--pool=prefork", "--concurrency=2", "-Q", "celery", "-n", name, "-l", "WARNING"]
    output = Path(tempfile.mkstemp(prefix="bench-worker-", suffix=".log")[1])
    with output.open("wb") as log_file:
        worker = subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as one below
        )
    try:
        deadline = time.monotonic() + ready_timeout
        while not celery_app.control.ping(destination=[name], timeout=0.5):
            if worker.poll() is not None or time.monotonic() > deadline:
                tail = output.read_text(errors="replace")[-2000:]
                raise WorldError(f"the Celery worker did not start; its log ({output}):\n{tail}")
        log(f"  worker {name} (pid {worker.pid}) ready; log: {output}")
        yield f"through worker {name}", worker.pid
    finally:
        _stop(worker)


def _stop(worker: subprocess.Popen) -> None:
    """TERM the worker's process group (a warm shutdown), KILL it if it lingers."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(worker.pid, sig)
        except ProcessLookupError:
            return
        try:
            worker.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def tasks_in_process(on: bool) -> Iterator[None]:
    """While inside, Celery tasks run eagerly in this process when ``on``, queued when not."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = on
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = before


@contextmanager
def in_process() -> Iterator[tuple[str, int]]:
    """Stands in for ``celery_worker`` when the fan-out runs in process; yields its
    label and this process's pid."""
    yield "in process (eager tasks)", os.getpid()
