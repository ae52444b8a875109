"""A redis-server of a test's own, on a free port, that the test may freeze and thaw.

Freezing is SIGSTOP: the kernel still accepts connections on the listening
socket, but nothing answers, as with a paused VM or a black-holed network.
The shared Redis on 6379 is never touched. ``broker_at`` points the Celery
app's publishers at such a server (or any URL) for the length of a block.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import kombu.pools
import pytest
import redis

from feed_project.celery import app as celery_app
from feed_project.celery import forget_broker_failures

START_SECONDS = 10


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateRedis:
    def __init__(self, process: subprocess.Popen, port: int, directory: Path | None) -> None:
        self.process = process
        self.port = port
        self.directory = directory
        self.frozen = False

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=5)

    def stop(self) -> None:
        """Stop at once, saving nothing (as a crash or a kill would)."""
        if self.frozen:
            self.thaw()
        self.process.kill()
        self.process.wait(timeout=10)

    def restart(self) -> None:
        """Stop without saving and start again on the same port and directory
        (loading its ``dump.rdb`` there, if any)."""
        self.stop()
        self.process = _start(self.port, self.directory)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def freeze(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)
        self.frozen = False

    @contextmanager
    def frozen_for_a_while(self) -> Iterator[None]:
        self.freeze()
        try:
            yield
        finally:
            self.thaw()


def _start(port: int, directory: Path | None) -> subprocess.Popen:
    """redis-server without persistence (a snapshot in ``directory`` is loaded at
    start, and SAVE writes one there); returns once it answers."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    command = [binary, "--port", str(port), "--bind", "127.0.0.1"]
    command += ["--save", "", "--appendonly", "no"]
    if directory is not None:
        # DEBUG RELOAD is refused by default since Redis 7: a test may use it.
        command += ["--dir", str(directory), "--enable-debug-command", "yes"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, socket_connect_timeout=1, socket_timeout=1)
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            client.ping()
            break
        except (redis.ConnectionError, redis.BusyLoadingError):
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise
            time.sleep(0.05)
    client.close()
    return process


@contextmanager
def private_redis(directory: Path | None = None) -> Iterator[PrivateRedis]:
    """Start redis-server without persistence on a free port; stop it afterwards.

    With ``directory``, its snapshots (SAVE) go there and a ``dump.rdb`` there
    is loaded at every start, so a test can restore an older one.
    """
    port = free_port()
    server = PrivateRedis(_start(port, directory), port, directory)
    try:
        yield server
    finally:
        if server.frozen:
            server.thaw()
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


# --- Pointing the site's broker at it -------------------------------------------


def drop_publisher_pools() -> None:
    """Forget the broker connections, as Celery does after a fork (Celery._after_fork)."""
    kombu.pools.reset()
    celery_app._pool = None
    amqp = celery_app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None


@contextmanager
def broker_at(url: str) -> Iterator[None]:
    """Publish for real (not eagerly) to the broker at ``url``."""
    previous = celery_app.conf.broker_url
    celery_app.conf.broker_url = url
    celery_app.conf.task_always_eager = False
    drop_publisher_pools()
    forget_broker_failures()
    try:
        yield
    finally:
        celery_app.conf.broker_url = previous
        celery_app.conf.task_always_eager = True
        drop_publisher_pools()
        forget_broker_failures()
