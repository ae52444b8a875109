"""masto.js, the client Elk and Phanpy are built on, against a live server.

Each scenario is a script under ``tests/api/js/`` (ES modules sharing
``helpers.mjs``) run by ``node`` with the site's address and what it needs in its
environment; it prints one JSON report, which the test here checks against the
site's own answers. node and the pinned ``masto`` (package-lock.json) are dev
tools ``make test`` installs: without them the tests fail, they never skip.

The site runs as it does in production: the live server publishes its tasks to a
broker and a real Celery worker (``tests/workers.py``) delivers posts, backfills
follows and writes notifications, so a scenario waits for what a worker does as
an app refreshing would, and the test waits for the queue to drain before it
compares the feeds. The other scenarios are ``test_masto_js_actions.py``'s.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.api.conftest import CAP, PAGE_SIZE, POSTS, site_pages
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "js"


def run_scenario(name: str, base_url: str, **env: str) -> dict:
    """Runs ``tests/api/js/<name>.mjs`` against ``base_url``; its JSON report."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: install Debian's nodejs and npm, then run make test")
    if not (ROOT / "node_modules" / "masto" / "package.json").is_file():
        pytest.fail("npm's masto is missing: run make test (or npm ci) in the repository")
    done = subprocess.run(
        [node, str(SCRIPTS / f"{name}.mjs")],
        env={**os.environ, "FEED_BASE_URL": base_url, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{name}.mjs failed:\n{done.stderr}\n{done.stdout}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_masto_js_signs_in_posts_and_pages_the_home_feed(
    live_server, live_queue, capped_feed, make_token
):
    alice, bob = capped_feed
    report = run_scenario(
        "sign_in_post_and_page",
        live_server.url,
        FEED_USERNAME="alice",
        FEED_PASSWORD=PASSWORD,
        FEED_AUTHOR_TOKEN=make_token(bob, "read write"),
        FEED_PAGE_SIZE=str(PAGE_SIZE),
    )

    assert report["instance"]["version"].endswith("(compatible; Feed)")
    assert report["app"] == {"name": "masto.js", "hasClientId": True}
    me = {"id": str(alice.pk), "username": "alice"}
    assert report["passwordAccount"] == me
    assert report["codeAccount"] == me
    assert report["codeScope"] == "read write follow"
    assert report["reply"]["inReplyToId"] == report["posted"]["id"]
    assert report["repliesCount"] == 1
    assert report["deletedStatus"] == 404

    live_queue.wait_for_drain()
    expected = site_pages(alice, PAGE_SIZE)
    assert sum(len(page) for page in expected) == POSTS + 1 > CAP
    assert len(expected) > 100
    assert report["pages"] == expected
    flat = [status_id for page in expected for status_id in page]
    going_up = [status_id for page in reversed(report["goingUp"]) for status_id in page]
    assert going_up == flat[:-1]
    assert report["revokedStatus"] == 401
    # The posts reached Alice's inbox through the worker, not in process.
    assert any("timelines.fan_out_post[" in worker.log() for worker in live_queue.workers)
