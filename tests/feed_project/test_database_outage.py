"""While PostgreSQL is unreachable every page answers 503 and Retry-After, and after it is
back the next request succeeds (feed_project.errors).

Nothing is mocked: a PostgreSQL of the module's own (tests/private_postgres.py),
migrated, and the site served from it by gunicorn as in production, one sync
worker so that every request meets the same worker and its one persistent
connection (CONN_MAX_AGE), with a Celery worker (one process) consuming a
redis-server of the module's own as broker. The tests speak HTTP to it, signed
in, and stop the server cleanly (a restart's first half) or as a crash. The
site has no cache Redis: the database is the subject.
"""

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings

from bench.processes import free_port
from posts import ids
from tests.private_postgres import PrivatePostgres, private_postgres
from tests.private_redis import private_redis

ROOT = Path(settings.BASE_DIR)
BIN = Path(sys.executable).parent
PASSWORD = "reader-password-123"
READY_SECONDS = 30
NEW_POSTS = f"/timeline/new/?after={ids.LOWEST_KEY}"
GUNICORN_OPTIONS = ["--workers", "1", "--timeout", "30", "--bind"]
WORKER_OPTIONS = ["--pool=prefork", "--concurrency=1", "-l", "info"]
WORKER_OPTIONS += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
DELIVERY_SECONDS = 15


@dataclass
class Site:
    port: int
    process: subprocess.Popen
    log_path: Path
    worker_log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def worker_log(self) -> str:
        return self.worker_log_path.read_text(errors="replace")


@dataclass
class Browser:
    """One signed-in reader: cookies kept, CSRF token sent with every POST."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self, method: str, path: str, body: dict | None = None, headers: dict | None = None
    ) -> tuple[int, dict[str, str], str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        data = None
        if method == "POST":
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["X-CSRFToken"] = self.cookies.get("csrftoken", "")
            data = urlencode(body or {})
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read().decode()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        connection.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, text

    def get(self, path: str, **headers: str) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path, headers=headers)

    def post(self, path: str, body: dict) -> tuple[int, dict[str, str], str]:
        return self.request("POST", path, body=body)

    def log_in(self, username: str) -> None:
        self.get("/accounts/login/")  # the CSRF cookie
        status, headers, _ = self.post(
            "/accounts/login/", {"username": username, "password": PASSWORD}
        )
        assert status == 302 and "sessionid" in self.cookies, (status, headers)


def _environment(database_url: str, broker_url: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    return env | {
        "DJANGO_SETTINGS_MODULE": "feed_project.settings",
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker_url,
        "RATELIMIT_ENABLED": "0",
        "PYTHONUNBUFFERED": "1",
    }


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def postgres() -> Iterator[PrivatePostgres]:
    with private_postgres() as server:
        server.create_database("feed")
        yield server


@pytest.fixture(scope="module")
def site(postgres, tmp_path_factory) -> Iterator[Site]:
    with private_redis() as broker:
        env = _environment(postgres.url("feed"), broker.url())
        _manage(env, "migrate", "--noinput")
        for name in ("reader", "author"):
            _manage(env | {"MODERATOR_PASSWORD": PASSWORD}, "createmoderator", name, "--noinput")
        yield from _serve(env, tmp_path_factory.mktemp("site"))


def _serve(env: dict[str, str], directory: Path) -> Iterator[Site]:
    port = free_port()
    log_path, worker_log_path = directory / "gunicorn.log", directory / "celery.log"
    with log_path.open("wb") as log, worker_log_path.open("wb") as worker_log:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), "feed_project.wsgi", *GUNICORN_OPTIONS, f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        worker = subprocess.Popen(
            [str(BIN / "celery"), "-A", "feed_project", "worker", *WORKER_OPTIONS],
            cwd=ROOT,
            env=env,
            stdout=worker_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as one
        )
    site = Site(port, process, log_path, worker_log_path)
    try:
        deadline = time.monotonic() + READY_SECONDS
        while True:
            try:
                if Browser(port).get("/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise AssertionError(f"gunicorn did not start:\n{site.log()[-3000:]}")
            time.sleep(0.1)
        while " ready." not in site.worker_log():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise AssertionError(f"celery did not start:\n{site.worker_log()[-3000:]}")
            time.sleep(0.1)
        yield site
    finally:
        process.terminate()
        process.wait(timeout=15)
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


@pytest.fixture
def reader(site, postgres) -> Browser:
    browser = Browser(site.port)
    browser.log_in("reader")
    return browser


def shown_posts(page: str) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Za-z]+)"', page)


def assert_back_in_a_moment(status: int, headers: dict[str, str], body: str) -> None:
    assert status == 503, (status, body[:300])
    assert headers["retry-after"].isdigit() and int(headers["retry-after"]) > 0
    assert headers["content-type"].startswith("text/html")
    assert "Back in a moment" in body
    assert "no-store" in headers["cache-control"]


def assert_json_503(status: int, headers: dict[str, str], body: str) -> None:
    assert status == 503, (status, body[:300])
    assert headers["retry-after"].isdigit()
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["error"]


def test_every_page_answers_503_while_the_database_is_stopped_and_200_once_it_is_back(
    site, postgres, reader
):
    status, _, home = reader.get("/")
    assert status == 200 and shown_posts(home) == []

    postgres.stop("fast")
    try:
        assert_back_in_a_moment(*reader.get("/"))
        assert_back_in_a_moment(*reader.get("/public/"))
        assert_back_in_a_moment(*reader.get("/notifications/"))
        # The count the home page polls answers JSON, asked for it or not.
        assert_json_503(*reader.get(NEW_POSTS, Accept="application/json"))
        assert_json_503(*reader.get(NEW_POSTS))
        assert_back_in_a_moment(*reader.post("/posts/new/", {"text": "during the outage"}))
        assert_back_in_a_moment(*Browser(site.port).get("/"))  # a visitor
    finally:
        postgres.start()

    status, _, home = reader.get("/")  # the first request after: still signed in
    assert status == 200 and "@reader" in home
    assert reader.get(NEW_POSTS)[0] == 200
    status, _, _ = reader.post("/posts/new/", {"text": "after the outage"})
    assert status == 302, status
    status, _, home = reader.get("/")
    assert len(shown_posts(home)) == 1 and "after the outage" in home  # nothing from during it
    log = site.log()
    assert "database unreachable: GET / answered 503" in log
    assert "Internal Server Error" not in log and "Traceback" not in log


def test_a_crash_costs_503s_only_and_the_first_request_after_recovery_succeeds(
    site, postgres, reader
):
    assert reader.get("/")[0] == 200  # the worker's connection is live

    postgres.stop("immediate")  # every backend killed: the connection is broken
    try:
        for _ in range(3):
            assert_back_in_a_moment(*reader.get("/"))
            assert_json_503(*reader.get(NEW_POSTS))
    finally:
        postgres.start()  # crash recovery first

    status, _, home = reader.get("/")
    assert status == 200 and "@reader" in home
    assert reader.get(NEW_POSTS)[0] == 200
    assert "Internal Server Error" not in site.log()


def test_a_restart_between_two_requests_costs_none_of_them(site, postgres, reader):
    """The reused connection is pinged before its first query (CONN_HEALTH_CHECKS): one
    the server dropped while the worker was idle is replaced, not used."""
    assert reader.get("/")[0] == 200

    postgres.stop("fast")
    postgres.start()

    status, _, home = reader.get("/")
    assert status == 200 and "@reader" in home
    assert "Internal Server Error" not in site.log()


def test_the_celery_worker_reconnects_after_a_crash_and_delivers_the_next_post(site, postgres):
    """The worker keeps its connection across tasks (CELERY_DB_REUSE_MAX); around
    each task feed_project.celery applies Django's request rules, so the first task
    after the server is back reconnects instead of failing on the dead connection."""
    author, reader = Browser(site.port), Browser(site.port)
    author.log_in("author")
    reader.log_in("reader")
    reader.post("/@author/follow/", {})
    assert reader.get("/")[0] == 200  # the reader's inbox is built
    status, _, _ = author.post("/posts/new/", {"text": "before the crash"})
    assert status == 302
    _wait_for_post(reader, "before the crash")  # delivered: the worker's connection is live

    postgres.stop("immediate")
    postgres.start()

    assert author.post("/posts/new/", {"text": "after the crash"})[0] == 302
    _wait_for_post(reader, "after the crash")  # fanned out by the worker, not pulled
    assert "Traceback" not in site.worker_log(), site.worker_log()[-3000:]


def _wait_for_post(reader: Browser, text: str) -> None:
    deadline = time.monotonic() + DELIVERY_SECONDS
    while text not in reader.get("/")[2]:
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} was not delivered in {DELIVERY_SECONDS} s")
        time.sleep(0.2)
