"""The "N new posts" notice: a cheap endpoint, and the script the home page loads for it."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from posts.services import create_post

NEW = "/timeline/new/"
SCRIPT = Path(settings.BASE_DIR) / "static" / "js" / "new-posts.js"


@pytest.fixture
def publish(django_capture_on_commit_callbacks):
    def publish(author, count: int = 1) -> list[str]:
        with django_capture_on_commit_callbacks(execute=True):
            return [create_post(author=author, text=f"post {n}").pk for n in range(count)]

    return publish


def newest_key(response) -> str:
    found = re.search(r'data-newest-key="([0-9A-Z]+)"', response.content.decode())
    assert found, "the feed carries no newest key"
    return found.group(1)


@pytest.mark.embedded
def test_the_count_is_what_arrived_since_the_page_was_shown(client, alice, bob, publish):
    publish(alice, 2)
    client.force_login(bob)
    key = newest_key(client.get("/"))
    assert client.get(NEW, {"after": key}).json() == {"count": 0}

    publish(alice, 3)

    response = client.get(NEW, {"after": key})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"count": 3}


def test_an_empty_feed_polls_from_the_lowest_key(client, alice, bob, publish):
    client.force_login(bob)
    key = newest_key(client.get("/"))
    assert set(key) == {"0"}

    publish(alice, 2)

    assert client.get(NEW, {"after": key}).json() == {"count": 2}


@pytest.mark.parametrize("after", ["", "nope", "0" * 15, "0" * 17, "abcdefghijklmnop", "'; --"])
def test_a_bad_key_is_a_400_in_json(alice_client, after):
    response = alice_client.get(NEW, {"after": after})

    assert response.status_code == 400
    assert "error" in response.json()


def test_visitors_get_a_401_in_json(client, db):
    response = client.get(NEW, {"after": "0" * 16})

    assert response.status_code == 401
    assert "error" in response.json()


def test_it_answers_get_only(alice_client):
    assert alice_client.post(NEW, {"after": "0" * 16}).status_code == 405


def test_it_costs_at_most_three_queries_and_no_feed_computation(
    client, alice, bob, publish, monkeypatch, django_assert_max_num_queries
):
    client.force_login(bob)
    key = newest_key(client.get("/"))  # builds the inbox and its cache
    publish(alice, 4)

    def no_feed(*args, **kwargs):
        raise AssertionError("the endpoint computed a feed")

    for name in ("home_feed", "hydrate", "_pull.reader_keys", "_state.open_built"):
        monkeypatch.setattr(f"timelines.home._page.{name}", no_feed)
    monkeypatch.setattr("timelines.home._inbox.Inbox.rebuild", no_feed)
    with CaptureQueriesContext(connection) as queries, django_assert_max_num_queries(3):
        response = client.get(NEW, {"after": key})

    assert response.json() == {"count": 4}
    tables = " ".join(q["sql"] for q in queries)
    assert "posts_post" not in tables


def test_the_home_page_loads_the_script_from_a_file_and_only_on_its_first_page(
    client, alice, bob, publish
):
    publish(alice, 25)
    client.force_login(bob)

    first = client.get("/").content.decode()
    assert re.search(r'<script src="/static/js/new-posts\.js" defer></script>', first)
    assert 'data-new-posts-url="/timeline/new/"' in first
    older = re.search(r'<a rel="next" href="([^"]+)"', first).group(1)
    assert "new-posts.js" not in client.get("/" + older).content.decode()
    assert "new-posts.js" not in client.get("/@alice/").content.decode()


def test_the_script_polls_while_visible_and_links_to_home():
    script = SCRIPT.read_text()

    assert "visibilityState" in script
    assert "30000" in script
    assert "data-newest-key" in script
    assert 'notice.href = "/"' in script
