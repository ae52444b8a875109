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
    def __init__(self, process: subprocess.Popen, port: int) -> None:
        self.process = process
        self.port = port
        self.frozen = False

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


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    """Start redis-server without persistence on a free port; stop it afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = PrivateRedis(process, port)
    try:
        client = redis.Redis(port=port, socket_connect_timeout=1, socket_timeout=1)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.05)
        client.close()
        yield server
    finally:
        if server.frozen:
            server.thaw()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
