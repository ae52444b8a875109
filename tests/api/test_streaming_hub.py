"""The streaming hub in one process: wakes reach the streams of the readers named, a
stream whose client reads too slowly is dropped, and with no Redis (the embedded
default) a delivery wakes this process's streams directly."""

import asyncio
import threading

import pytest

from api import streaming
from api.streaming import QUEUE_SIZE, Hub, Stream


def test_a_wake_reaches_only_the_readers_named_and_a_slow_stream_is_dropped(settings):
    settings.REDIS_URL = ""

    async def run() -> None:
        hub = Hub()
        mine, other = Stream(1), Stream(2)
        hub.join(mine)
        hub.join(other)
        hub.wake([1])
        assert (mine.wakes.qsize(), other.wakes.qsize()) == (1, 0)
        for _ in range(QUEUE_SIZE):
            hub.wake([1])
        assert mine.dropped and not other.dropped
        hub.leave(mine)
        hub.leave(other)
        assert hub.streams == {}

    asyncio.run(run())


@pytest.mark.embedded
def test_with_no_redis_a_delivery_wakes_the_process_streams_from_another_thread(settings):
    settings.REDIS_URL = ""

    async def run() -> None:
        stream = Stream(7)
        streaming.hub.join(stream)
        try:
            # A sync view's thread publishes, as fan-out does under uvicorn's thread pool.
            publisher = threading.Thread(target=streaming.publish, args=([7, 8], "key"))
            publisher.start()
            await asyncio.wait_for(stream.wakes.get(), timeout=5)
            publisher.join()
        finally:
            streaming.hub.leave(stream)

    asyncio.run(run())
