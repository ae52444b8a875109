"""A redis-server of a test's own, on a free port, that the test may freeze and thaw.

Freezing is SIGSTOP: the kernel still accepts connections on the listening
socket, but nothing answers, as with a paused VM or a black-holed network.
The shared Redis on 6379 is never touched. ``broker_at`` points the Celery
app's publishers at such a server (or any URL) for the length of a block.

``private_redis_cluster`` starts a Redis Cluster of three masters the same way
(``redis-cli --cluster create``). Run as a program, this module starts one,
runs a command with ``REDIS_URL`` naming it, and stops it (``make test``'s
cache suite on a cluster)::

    python -m tests.private_redis cluster -- pytest tests/timelines/...
"""

import copy
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import kombu.pools
import pytest
import redis
from django.conf import settings
from django.test import override_settings
from redis.cluster import RedisCluster

from bench.processes import free_port

START_SECONDS = 10


def free_cluster_port() -> int:
    """A free port whose cluster bus port (10000 above it) is free too."""
    while True:
        port = free_port()
        if port + 10000 < 65536:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


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

    def restart(self, *, down_for: float = 0) -> None:
        """Stop without saving and start again, ``down_for`` seconds later, on the same
        port and directory (loading its ``dump.rdb`` there, if any)."""
        self.stop()
        time.sleep(down_for)
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


def _binary(name: str) -> str:
    binary = shutil.which(name)
    if binary is None:
        pytest.fail(f"{name} is not installed (apt-get install redis-server)")
    return binary


def _start(port: int, directory: Path | None, *, cluster: bool = False) -> subprocess.Popen:
    """redis-server without persistence (a snapshot in ``directory`` is loaded at
    start, and SAVE writes one there); returns once it answers."""
    command = [_binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1"]
    command += ["--save", "", "--appendonly", "no"]
    if directory is not None:
        # DEBUG RELOAD is refused by default since Redis 7: a test may use it.
        command += ["--dir", str(directory), "--enable-debug-command", "yes"]
    if cluster:
        # The node's own state file (its id, the slot map), in its directory.
        command += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
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
        _stop(server)


# --- A Redis Cluster of three masters -------------------------------------------


class PrivateRedisCluster:
    def __init__(self, masters: list[PrivateRedis]) -> None:
        self.masters = masters

    def url(self) -> str:
        """The site's REDIS_URL for it (feed_project.redis_cluster): every master a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{m.port}" for m in self.masters)

    def client(self) -> RedisCluster:
        return RedisCluster(host="127.0.0.1", port=self.masters[0].port, socket_timeout=5)

    def master_of(self, key: str) -> PrivateRedis:
        """The master that holds ``key``'s slot."""
        port = self.client().get_node_from_key(key).port
        return next(master for master in self.masters if master.port == port)


def _wait_for_cluster(masters: list[PrivateRedis]) -> None:
    deadline = time.monotonic() + START_SECONDS
    for master in masters:
        client = master.client()
        while client.cluster("INFO").get("cluster_state") != "ok":
            if time.monotonic() > deadline:
                raise RuntimeError(f"Redis Cluster on {master.port}: not ok in {START_SECONDS} s")
            time.sleep(0.05)
        client.close()


@contextmanager
def private_redis_cluster(directory: Path, masters: int = 3) -> Iterator[PrivateRedisCluster]:
    """Start a Redis Cluster of ``masters`` masters, no replicas, without persistence,
    on free loopback ports (each node's files under ``directory``); stop it afterwards."""
    servers: list[PrivateRedis] = []
    try:
        for n in range(masters):
            port = free_cluster_port()
            node_directory = directory / f"node-{n}-{port}"
            node_directory.mkdir(parents=True)
            servers.append(PrivateRedis(_start(port, node_directory, cluster=True), port, None))
        subprocess.run(
            [_binary("redis-cli"), "--cluster", "create"]
            + [f"127.0.0.1:{server.port}" for server in servers]
            + ["--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=START_SECONDS * 3,
        )
        _wait_for_cluster(servers)
        yield PrivateRedisCluster(servers)
    finally:
        for server in servers:
            _stop(server)


def _stop(server: PrivateRedis) -> None:
    if server.frozen:
        server.thaw()
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def main(argv: list[str]) -> int:
    """``cluster -- COMMAND...``: run COMMAND with REDIS_URL naming a fresh cluster."""
    if len(argv) < 3 or argv[:2] != ["cluster", "--"]:
        print("usage: python -m tests.private_redis cluster -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="redis-cluster-") as directory,
        private_redis_cluster(Path(directory)) as cluster,
    ):
        print(f"Redis Cluster of 3 masters: REDIS_URL={cluster.url()}", flush=True)
        environment = {**os.environ, "REDIS_URL": cluster.url()}
        return subprocess.run(argv[2:], env=environment).returncode


# --- Pointing the site's broker at it -------------------------------------------


# The Celery app is imported where it is used: importing it names Django's
# settings module in os.environ, which `main` passes on to the command it runs.


def drop_publisher_pools() -> None:
    """Forget the broker connections, as Celery does after a fork (Celery._after_fork)."""
    from feed_project.celery import app as celery_app

    kombu.pools.reset()
    celery_app._pool = None
    amqp = celery_app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None


@contextmanager
def cache_at(url: str) -> Iterator[None]:
    """Point the cache, and the inbox caches that use its client, at ``url``."""
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["LOCATION"] = url
    with override_settings(REDIS_URL=url, CACHES=caches):
        yield


@contextmanager
def broker_at(url: str) -> Iterator[None]:
    """Publish for real (not eagerly) to the broker at ``url``."""
    from feed_project.celery import app as celery_app
    from feed_project.celery import forget_broker_failures

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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
