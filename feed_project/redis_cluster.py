"""The Django cache on a Redis Cluster: ``REDIS_URL=redis+cluster://host:port[,host:port...]``.

django-redis speaks to one server (or a replication set). For a cluster its
connection factory here hands it a ``redis.cluster.RedisCluster``, which learns
the slot map from any of the seed nodes and sends each command to the master of
its key's slot. The client class adapts the few calls a plain server answers
and a cluster does not: ``get_many`` (MGET must stay in one slot; MGET
NONATOMIC splits it), ``clear`` (FLUSHDB on every master), and a cluster that
cannot be reached at all, which is a cache error (ignored, the page is served
from PostgreSQL) rather than an exception out of ``get_client``.

A cluster has database 0 only, and Celery's Redis transport does not speak
Cluster: the broker is set apart (CELERY_BROKER_URL, settings).
"""

from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from django_redis.client import DefaultClient
from django_redis.exceptions import ConnectionInterrupted
from django_redis.pool import ConnectionFactory
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError
from redis.retry import Retry

from feed_project.cache_breaker import GuardedRedisCluster, guarded

SCHEMES = {"redis+cluster": False, "rediss+cluster": True}  # scheme: TLS

# What the settings add to django-redis's OPTIONS for a cluster.
CACHE_OPTIONS = {
    "CLIENT_CLASS": "feed_project.redis_cluster.ClusterClient",
    "CONNECTION_FACTORY": "feed_project.redis_cluster.ClusterConnectionFactory",
}


def is_cluster_url(url: str) -> bool:
    return url.split("://", 1)[0] in SCHEMES


def startup_nodes(url: str) -> list[tuple[str, int]]:
    """The seed nodes of a cluster URL; ValueError says what is wrong with it."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ValueError("a cluster URL starts with redis+cluster:// or rediss+cluster://")
    if parts.path not in ("", "/", "/0"):
        raise ValueError("a Redis Cluster has database 0 only: leave the path out")
    if parts.query or parts.fragment:
        raise ValueError("a cluster URL takes no query string")
    hosts = parts.netloc.rsplit("@", 1)[-1]
    nodes = []
    for host_port in hosts.split(","):
        host, _, port = host_port.strip().rpartition(":")
        host = host.strip("[]")  # an IPv6 address: [::1]:7000
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{host_port!r} is not host:port")
        nodes.append((host, int(port)))
    return nodes


def _credentials(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    found = {}
    if parts.username:
        found["username"] = parts.username
    if parts.password:
        found["password"] = parts.password
    return found


class ClusterConnectionFactory(ConnectionFactory):
    """One RedisCluster per URL and process (it keeps a pool per node, thread-safe),
    whose calls honour the cache's breaker (feed_project.cache_breaker)."""

    _clusters: dict[str, RedisCluster] = {}

    def connect(self, url: str) -> RedisCluster:
        cluster = self._clusters.get(url)
        if cluster is None:
            timeouts = {
                name: self.options[option]
                for name, option in (
                    ("socket_timeout", "SOCKET_TIMEOUT"),
                    ("socket_connect_timeout", "SOCKET_CONNECT_TIMEOUT"),
                )
                if option in self.options
            }
            # Guarded by the URL, as the client's calls are (feed_project.cache_breaker):
            # seed nodes that do not answer start a pause.
            with guarded(url):
                try:
                    cluster = GuardedRedisCluster(
                        startup_nodes=[
                            ClusterNode(host, port) for host, port in startup_nodes(url)
                        ],
                        ssl=SCHEMES[urlsplit(url).scheme],
                        # A cache: a master that is down or hung costs one timeout,
                        # then the page is served from PostgreSQL. (MOVED and ASK
                        # redirections are followed regardless.)
                        retry=Retry(NoBackoff(), 0),
                        breaker_key=url,
                        **_credentials(url),
                        **timeouts,
                    )
                except RedisClusterException as exc:  # no seed node answered
                    raise RedisConnectionError(f"Redis Cluster {url!r}: {exc}") from exc
            self._clusters[url] = cluster
        return cluster

    def disconnect(self, connection: RedisCluster) -> None:
        connection.disconnect_connection_pools()

    @classmethod
    def forget(cls, url: str) -> None:
        """Close and drop the client of one cluster (tests stop theirs)."""
        cluster = cls._clusters.pop(url, None)
        if cluster is not None:
            cluster.close()


class ClusterClient(DefaultClient):
    """django-redis's client with the calls a cluster answers differently."""

    def connect(self, index: int = 0) -> Any:
        # Called before the calls' own error handling: a cluster that cannot be
        # reached is made the error IGNORE_EXCEPTIONS ignores.
        try:
            return super().connect(index)
        except RedisError as exc:
            raise ConnectionInterrupted(connection=None) from exc

    def get_many(
        self, keys: Collection[str], version: int | None = None, client: Any = None
    ) -> dict:
        if client is None:
            client = self.get_client(write=False)
        if not keys:
            return {}
        by_key = {self.make_key(key, version=version): key for key in keys}
        try:
            values = client.mget_nonatomic(*by_key)
        except (RedisError, RedisClusterException) as exc:
            raise ConnectionInterrupted(connection=client) from exc
        return {
            by_key[key]: self.decode(value)
            for key, value in zip(by_key, values, strict=True)
            if value is not None
        }

    def clear(self, client: Any = None) -> None:
        if client is None:
            client = self.get_client(write=True)
        try:
            client.flushdb(target_nodes=RedisCluster.PRIMARIES)
        except (RedisError, RedisClusterException) as exc:
            raise ConnectionInterrupted(connection=client) from exc
