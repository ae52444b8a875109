"""The site under a real uvicorn, and Mastodon's user stream over SSE (api.streaming).

uvicorn runs in a subprocess against the test database and the test Redis; posts are
made here, where eager fan-out sends ``delivered``, which publishes on Redis, which the
uvicorn process hears and answers by reading the reader's home feed.
"""

import contextlib
import os
import queue
import signal
import socket
import subprocess
import time

import pytest
import requests
from django.conf import settings
from mastodon import Mastodon, StreamListener

from posts.services import create_post
from relations.services import block, follow
from tests.factories import UserFactory
from tests.workers import BASE_DIR, url_of_test_database, wait_until

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the uvicorn process needs Redis")

WAIT_SECONDS = 15
UVICORN = BASE_DIR / ".venv" / "bin" / "uvicorn"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(url: str) -> bool:
    with contextlib.suppress(requests.ConnectionError):
        return requests.get(url, timeout=2).status_code == 200
    return False


@pytest.fixture
def uvicorn(transactional_db, tmp_path):
    """The base URL of a real uvicorn serving the site's ASGI application."""
    port = _free_port()
    log = (tmp_path / "uvicorn.log").open("wb")
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "feed_project.settings",
        "DATABASE_URL": url_of_test_database(),
        "REDIS_URL": settings.REDIS_URL,
        "STREAMING_HEARTBEAT_SECONDS": "1",
        "RATELIMIT_ENABLED": "0",
    }
    process = subprocess.Popen(
        [UVICORN, "feed_project.asgi:application", "--host", "127.0.0.1", "--port", str(port)],
        cwd=BASE_DIR,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(base + "/api/v1/streaming/health"), what="uvicorn", timeout=30)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()


def test_pages_static_files_and_health_are_served_by_uvicorn(uvicorn):
    assert requests.get(uvicorn + "/", timeout=5).status_code == 200
    css = requests.get(uvicorn + "/static/css/site.css", timeout=5)
    assert css.status_code == 200
    assert css.headers["Content-Type"].startswith("text/css")
    health = requests.get(uvicorn + "/api/v1/streaming/health", timeout=5)
    assert (health.status_code, health.text) == (200, "OK")
    assert health.headers["Content-Type"].startswith("text/plain")


def test_a_bad_token_or_an_unknown_stream_is_a_json_error(uvicorn, make_token):
    for answer in (
        requests.get(uvicorn + "/api/v1/streaming/user", timeout=5),
        requests.get(uvicorn + "/api/v1/streaming/user?access_token=nope", timeout=5),
        requests.get(
            uvicorn + "/api/v1/streaming/user", headers={"Authorization": "Bearer nope"}, timeout=5
        ),
    ):
        assert answer.status_code == 401
        assert "error" in answer.json()
    reader = UserFactory(username="reader")
    no_read = make_token(reader, "write")
    refused = requests.get(uvicorn + f"/api/v1/streaming/user?access_token={no_read}", timeout=5)
    assert refused.status_code == 403
    assert "error" in refused.json()
    token = make_token(reader, "read")
    unknown = requests.get(
        uvicorn + f"/api/v1/streaming?stream=nope&access_token={token}", timeout=5
    )
    assert unknown.status_code == 400
    assert "error" in unknown.json()


class Collector(StreamListener):
    """What a stream sent, as Mastodon.py parsed it, for the test's thread to read."""

    def __init__(self) -> None:
        self.updates: queue.Queue = queue.Queue()
        self.heartbeats: queue.Queue = queue.Queue()

    def on_update(self, status) -> None:
        self.updates.put(status)

    def handle_heartbeat(self) -> None:
        self.heartbeats.put(True)


def test_a_mastodon_client_streams_the_home_feed_and_nothing_it_may_not_see(uvicorn, make_token):
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    carol = UserFactory(username="carol")
    dave = UserFactory(username="dave")
    follow(follower=bob, followee=alice)
    follow(follower=bob, followee=dave)
    block(user=bob, target=dave)
    create_post(author=alice, text="before the stream opens")

    client = Mastodon(access_token=make_token(bob, "read"), api_base_url=uvicorn)
    streaming_base = uvicorn.replace("http://", "ws://")
    assert client.instance_v1().urls.streaming_api == streaming_base
    assert client.instance_v2().configuration.urls.streaming == streaming_base
    assert client.stream_healthy()
    listener = Collector()
    handle = client.stream_user(listener, run_async=True)
    try:
        listener.heartbeats.get(timeout=WAIT_SECONDS)  # open, and the process is listening
        hidden = create_post(author=alice, text="only for @carol", visibility="direct")
        create_post(author=dave, text="from someone bob blocked")
        seen = create_post(author=alice, text="for everyone")
        update = listener.updates.get(timeout=WAIT_SECONDS)
        received = [update]
        with contextlib.suppress(queue.Empty):
            while True:
                received.append(listener.updates.get(timeout=1.5))
        ids = [str(status.id) for status in received]
        assert ids == [_status_id(seen)]
        assert received[0].account.username == "alice"
        assert received[0].content  # the Status entity, as the REST API answers it
        assert hidden.recipients and carol.pk  # addressed to carol alone
    finally:
        handle.close()


def _status_id(post) -> str:
    from posts.ids import decimal_of_key

    return decimal_of_key(post.timeline_key)


def test_the_stream_sends_a_heartbeat_when_idle(uvicorn, make_token):
    reader = UserFactory(username="idle")
    token = make_token(reader, "read:statuses")
    started = time.monotonic()
    with requests.get(
        uvicorn + "/api/v1/streaming",
        params={"stream": "user"},
        headers={"Authorization": f"Bearer {token}"},
        stream=True,
        timeout=10,
    ) as answer:
        assert answer.status_code == 200
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        lines = answer.iter_lines(decode_unicode=True)
        assert next(lines) == ":)"
        assert ":thump" in [next(lines) for _ in range(3)]
    assert time.monotonic() - started < 8
