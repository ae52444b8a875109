"""The broker's client, made to ride out a broker that goes away.

Celery and kombu, as they are, make a broker restart cost minutes:

- The worker's consumer waits 2, 4, 6, ... (up to 30) seconds between attempts
  to reconnect; the intervals are fixed in Celery's ``Consumer.ensure_connected``,
  read from no setting, so a broker back after ten seconds is found 20 s in.
  ``Consumer`` (CELERY_WORKER_CONSUMER) tries every second at most.
- With the Redis transport, a lost connection can stop the worker for good:
  Celery collects the broken connection, which lets go of its transport, then
  closes it again; a channel whose first close the dead socket cut short (it was
  in BRPOP) then restores its unacknowledged messages, or acknowledges a task
  that was running, through a transport that is gone. kombu raises
  ``AttributeError`` there, which Celery does not retry after: "Unrecoverable
  error", and the worker exits. ``RedisTransport``'s channels raise a connection
  error instead, which Celery logs and goes on from (the messages stay in the
  broker's unacked hash, handed out again after the visibility timeout; the
  outbox's sweep queues their work again sooner).
"""

import functools

import redis
from celery.worker.consumer import Consumer as CeleryConsumer
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis

# Connection refused is answered at once, and a hung broker costs each attempt
# the connect timeout: a worker polling a broker that is down this often costs
# it nothing, and finds it back within a second.
RECONNECT_FIRST_SECONDS = 0.5
RECONNECT_EVERY_SECONDS = 1.0


class Consumer(CeleryConsumer):
    def ensure_connected(self, conn):
        # Celery passes kombu's default intervals; this connection object is
        # made for this one attempt to connect.
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=RECONNECT_FIRST_SECONDS,
            interval_step=RECONNECT_FIRST_SECONDS,
            interval_max=RECONNECT_EVERY_SECONDS,
        )
        return super().ensure_connected(conn)


class RedisChannel(kombu_redis.Channel):
    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise redis.ConnectionError("the broker connection of this channel is closed")
        return super()._connparams(asynchronous=asynchronous)


class RedisTransport(kombu_redis.Transport):
    Channel = RedisChannel


def use_redis_transport() -> None:
    """Every kombu connection of this process to a redis:// or rediss:// broker uses
    ``RedisTransport`` (kombu resolves a URL's scheme through this table)."""
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = f"{__name__}:RedisTransport"
