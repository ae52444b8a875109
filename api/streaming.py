"""Mastodon's streaming API over server-sent events, first slice: ``/api/v1/streaming/health``
and the user stream (``/api/v1/streaming/user``, ``/api/v1/streaming?stream=user``).

A message on the stream is a hint, never the news itself. The home feed's owner sends
``timelines.home.delivered`` after each delivery chunk; the receiver here publishes
one message naming the chunk's readers on a Redis channel (or, with no Redis, hands
it to this process's hub). Each ASGI process keeps one subscription and wakes the
open streams of the readers named; a woken stream reads its reader's home feed above
the last key it sent (``timelines.home.home_feed``) and sends those entries. So the
feed's rules decide what a reader sees, and a lost message only delays an update.

Async Django views (ninja's routers are sync): the stream is a
``StreamingHttpResponse`` over an async iterator, served by an ASGI server (uvicorn);
the database is reached through ``sync_to_async``.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

import redis.asyncio
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django_redis import get_redis_connection
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import RedisClusterException

from api import entities, errors
from api.auth import Token
from feed_project.pagination import Cursor
from feed_project.redis_cluster import is_cluster_url, startup_nodes
from feed_project.refusals import Refused
from timelines.home import home_feed

logger = logging.getLogger(__name__)

CHANNEL = "feed:streaming:delivered"
QUEUE_SIZE = 16  # wakes a stream may have waiting; more, and its client is too slow to keep
PAGES_PER_WAKE = 5  # pages of new entries one wake sends; the rest wait for the next
RECONNECT_SECONDS = 1.0
SUBSCRIBED_SECONDS = 2.0  # how long a new stream waits for the process to be listening
STREAM_SCOPE = "read:statuses"
UNKNOWN_STREAM = "Unknown stream type"


class Stream:
    """One open stream: its reader and the wakes waiting for it."""

    def __init__(self, reader_id: int) -> None:
        self.reader_id = reader_id
        self.wakes: asyncio.Queue[None] = asyncio.Queue(maxsize=QUEUE_SIZE)
        self.dropped = False


class Hub:
    """This process's open streams by reader, and its one subscription to the channel
    (while any stream is open)."""

    def __init__(self) -> None:
        self.streams: dict[int, set[Stream]] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.listener: asyncio.Task | None = None
        self.subscribed: asyncio.Event | None = None

    def join(self, stream: Stream) -> None:
        self.loop = asyncio.get_running_loop()
        self.streams.setdefault(stream.reader_id, set()).add(stream)
        if settings.REDIS_URL and self.listener is None:
            self.subscribed = asyncio.Event()
            self.listener = asyncio.create_task(_listen(self, self.subscribed))

    async def listening(self) -> None:
        """Until the process's subscription is made (or a short while has passed), so
        that what is delivered after a stream opens wakes it."""
        if self.subscribed is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.subscribed.wait(), SUBSCRIBED_SECONDS)

    def leave(self, stream: Stream) -> None:
        readers = self.streams.get(stream.reader_id, set())
        readers.discard(stream)
        if not readers:
            self.streams.pop(stream.reader_id, None)
        if not self.streams and self.listener is not None:
            self.listener.cancel()  # the last stream closed: so does the subscription
            self.listener = None

    def wake(self, reader_ids: Iterable[int]) -> None:
        """In the event loop: a wake for each open stream of these readers; a stream
        whose queue is full is dropped (its client reads too slowly)."""
        for reader_id in reader_ids:
            for stream in self.streams.get(reader_id, ()):
                try:
                    stream.wakes.put_nowait(None)
                except asyncio.QueueFull:
                    stream.dropped = True

    def wake_from_thread(self, reader_ids: list[int]) -> None:
        """From any thread (a sync view's, with no Redis): wake in the loop's own thread."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.wake, reader_ids)


hub = Hub()


def _subscriber() -> Any:
    """A client of the site's Redis for the subscription; on a Redis Cluster, one seed
    node, since a cluster's PUBLISH reaches the subscribers of every node."""
    url = settings.REDIS_URL
    if is_cluster_url(url):
        host, port = startup_nodes(url)[0]
        return redis.asyncio.Redis(host=host, port=port, ssl=url.startswith("rediss"))
    return redis.asyncio.Redis.from_url(url)


async def _listen(into: Hub, subscribed: asyncio.Event) -> None:
    """The process's subscription: each message wakes the streams of its readers; a
    lost connection is made again (what it missed only delays those streams)."""
    while True:
        client = _subscriber()
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(CHANNEL)
            subscribed.set()
            async for message in pubsub.listen():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    into.wake(int(reader) for reader in json.loads(message["data"])["reader_ids"])
        except (redis.RedisError, RedisClusterException, OSError):
            logger.warning("streaming: the subscription to %s broke; subscribing again", CHANNEL)
        finally:
            with contextlib.suppress(redis.RedisError):
                await pubsub.aclose()
                await client.aclose()
        await asyncio.sleep(RECONNECT_SECONDS)


def publish(reader_ids: list[int], timeline_key: str) -> None:
    """One message per delivered chunk, naming its readers (``timelines.home.delivered``'s
    receiver, api.signal_handlers: an error here is logged and the post stays delivered)."""
    if settings.REDIS_URL:
        message = json.dumps({"reader_ids": list(reader_ids), "timeline_key": timeline_key})
        try:
            get_redis_connection("default").publish(CHANNEL, message)
        except (redis.RedisError, RedisClusterException, ConnectionInterrupted):
            # The streams then wait for the next message: nothing is lost but time.
            logger.warning("streaming: could not publish a delivery on %s", CHANNEL)
    else:
        hub.wake_from_thread(list(reader_ids))


# --- the views -----------------------------------------------------------------------


async def health(request: HttpRequest) -> HttpResponse:
    return HttpResponse("OK", content_type="text/plain")


def _reader(request: HttpRequest) -> Any:
    """The token's owner (``api.auth.Token``'s rules), from ``Authorization: Bearer`` or
    Mastodon's ``access_token`` query; None for no usable token."""
    scheme, _, bearer = request.headers.get("Authorization", "").partition(" ")
    token = bearer.strip() if scheme.lower() == "bearer" else ""
    token = token or request.GET.get("access_token", "")
    if not token or Token(STREAM_SCOPE).authenticate(request, token) is None:
        return None
    return request.user


def _newest_key(reader: Any) -> str | None:
    try:
        items = home_feed(reader=reader, cursor=Cursor(), limit=1).items
        return items[0].key if items else None
    finally:
        close_old_connections()  # a stream holds no database connection between wakes


def _updates(request: HttpRequest, reader: Any, last_key: str | None) -> tuple[list[str], Any]:
    """The ``update`` events of the reader's home feed above ``last_key``, oldest first,
    and the newest key sent."""
    events: list[str] = []
    try:
        for _ in range(PAGES_PER_WAKE):
            page = home_feed(reader=reader, cursor=Cursor(after=last_key))
            if not page.items:
                break
            entries = [(item.key, item.post) for item in reversed(page.items)]
            for status in entities.statuses(request, entries):
                events.append(f"event: update\ndata: {json.dumps(status)}\n\n")
            last_key = page.items[0].key
            if page.newer is None:
                break
    finally:
        close_old_connections()
    return events, last_key


async def _events(request: HttpRequest, reader: Any, stream: Stream) -> AsyncIterator[str]:
    heartbeat = settings.STREAMING_HEARTBEAT_SECONDS
    hub.join(stream)  # here, not in the view: the finally below is then sure to run
    try:
        await hub.listening()
        last_key = await sync_to_async(_newest_key)(reader)
        yield ":)\n\n"  # Mastodon's first line: the stream is open
        while not stream.dropped:
            try:
                await asyncio.wait_for(stream.wakes.get(), timeout=heartbeat)
            except TimeoutError:
                yield ":thump\n\n"
                continue
            while not stream.wakes.empty():  # one read answers every wake waiting
                stream.wakes.get_nowait()
            events, last_key = await sync_to_async(_updates)(request, reader, last_key)
            for event in events:
                yield event
    finally:
        hub.leave(stream)


async def user(request: HttpRequest, stream: str = "user") -> HttpResponse:
    """The user stream: the reader's home feed as it grows, as ``update`` events."""
    if stream != "user":
        return errors.error(UNKNOWN_STREAM, 400)
    try:
        reader = await sync_to_async(_reader)(request)
    except Refused as exc:  # the token lacks the scope (403), or is an app's own (422)
        status = next(
            (code for kind, code in errors.STATUS_OF_REFUSAL if isinstance(exc, kind)), 422
        )
        return errors.error(exc.message, status)
    if reader is None:
        return errors.error("The access token is invalid", 401)
    response = StreamingHttpResponse(_events(request, reader, Stream(reader.pk)))
    response["Content-Type"] = "text/event-stream"
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must not hold events back
    return response


async def streaming(request: HttpRequest) -> HttpResponse:
    """``/api/v1/streaming?stream=user``: the stream named in the query."""
    return await user(request, stream=request.GET.get("stream", ""))
