"""Signed-in pages are Cache-Control: private, so no shared cache keeps one reader's page."""

import pytest
from django.test import Client

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def cache_control(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part.strip()}


@pytest.mark.parametrize("path", ["/", "/@alice/", "/notifications/", "/accounts/profile/"])
def test_signed_in_pages_are_private(alice_client, path):
    response = alice_client.get(path)

    assert response.status_code == 200
    assert "private" in cache_control(response)


def test_a_signed_in_redirect_and_not_found_page_are_private_too(alice_client):
    assert "private" in cache_control(alice_client.get("/accounts/login/"))  # redirect home
    assert "private" in cache_control(alice_client.get("/no-such-page/"))


def test_a_response_that_sets_its_own_cache_control_keeps_it(alice_client):
    response = alice_client.get("/timeline/new/")

    assert response.status_code == 200
    assert cache_control(response) == {"no-store"}


@pytest.mark.parametrize("path", ["/", "/@alice/", "/accounts/signup/"])
def test_signed_out_pages_are_not_marked_private(client, alice, path):
    assert "private" not in cache_control(client.get(path))


def test_the_page_answering_a_log_in_is_private(alice):
    client = Client()
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})

    assert response.status_code == 302
    assert "private" in cache_control(response)
