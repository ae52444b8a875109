"""Errors as Mastodon's clients expect them: ``{"error": ...}`` JSON with the status
that says what went wrong, never an HTML page or a 500 under /api/."""

import pytest

from posts.models import MAX_POST_LENGTH
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ME = "/api/v1/accounts/verify_credentials"


@pytest.fixture
def user(db):
    return UserFactory(username="hana")


def assert_error(response, status):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    assert isinstance(response.json()["error"], str) and response.json()["error"]


def test_no_token_a_bad_one_an_expired_one_and_another_scheme_are_401(
    api, client, user, make_token
):
    assert_error(api.get(ME), 401)
    assert_error(api.get(ME, token="not-a-token"), 401)
    assert_error(api.get(ME, token=make_token(user, expires_in=-1)), 401)
    assert_error(client.get(ME, headers={"Authorization": "Basic aGFuYTpwdw=="}), 401)


def test_the_session_cookie_is_no_token(client, user):
    client.force_login(user)
    assert_error(client.get(ME), 401)


def test_a_read_only_token_cannot_post_and_a_write_only_one_cannot_read(api, user, make_token):
    read_only = make_token(user, "read")
    assert_error(api.post("/api/v1/statuses", {"status": "hi"}, token=read_only), 403)
    write_only = make_token(user, "write")
    assert_error(api.get("/api/v1/timelines/home", token=write_only), 403)


def test_granular_scopes_satisfy_the_endpoints_under_them(api, user, make_token):
    token = make_token(user, "read:statuses write:statuses")
    assert api.get("/api/v1/timelines/home", token=token).status_code == 200
    assert api.post("/api/v1/statuses", {"status": "hi"}, token=token).status_code == 200
    assert_error(api.get(ME, token=token), 403)  # read:accounts it has not
    assert api.get(ME, token=make_token(user, "profile")).status_code == 200


def test_a_limit_past_forty_is_cut_to_forty_and_a_word_is_a_422(api, user, make_token):
    token = make_token(user)
    assert api.get("/api/v1/timelines/home", token=token, limit=10000).status_code == 200
    assert_error(api.get("/api/v1/timelines/home", token=token, limit="many"), 422)
    assert_error(api.get("/api/v1/timelines/home", token=token, max_id="12ab"), 422)


def test_a_bogus_visibility_a_long_status_and_an_empty_one_are_422(api, user, make_token):
    token = make_token(user)
    bogus = api.post("/api/v1/statuses", {"status": "hi", "visibility": "bogus"}, token=token)
    assert_error(bogus, 422)
    assert "visibility" in bogus.json()["details"]
    long = api.post("/api/v1/statuses", {"status": "x" * (MAX_POST_LENGTH + 1)}, token=token)
    assert_error(long, 422)
    assert "status" in long.json()["details"]
    assert_error(api.post("/api/v1/statuses", {"status": ""}, token=token), 422)
    assert_error(api.post("/api/v1/statuses", {"status": 5, "sensitive": "x"}, token=token), 422)


def test_a_missing_or_malformed_status_or_account_is_a_404(api, user, make_token):
    token = make_token(user)
    for path in (
        "/api/v1/statuses/123456789012345678901",
        "/api/v1/statuses/not-a-number",
        "/api/v1/statuses/" + "9" * 40,
        "/api/v1/accounts/999999",
        "/api/v1/accounts/alice",
        "/api/v1/no/such/endpoint",
        "/api/v2/nothing/",
    ):
        assert_error(api.get(path, token=token), 404)
    assert_error(api.delete("/api/v1/statuses/123", token=token), 404)


def test_deleting_someone_elses_status_is_a_403(api, user, make_token):
    other = UserFactory(username="ivan")
    posted = api.post("/api/v1/statuses", {"status": "mine"}, token=make_token(other)).json()
    assert_error(api.delete(f"/api/v1/statuses/{posted['id']}", token=make_token(user)), 403)


def test_a_body_that_is_not_json_is_an_error_not_a_500(client, user, make_token):
    answer = client.post(
        "/api/v1/statuses",
        b"{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {make_token(user)}"},
    )
    assert_error(answer, 422)
    assert answer.json()["details"] == {"body": ["Cannot parse request body"]}


def test_over_the_post_rate_limit_is_a_429_with_retry_after(api, user, make_token, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "post": ("2/m", "")}
    token = make_token(user)
    answers = [api.post("/api/v1/statuses", {"status": f"n{n}"}, token=token) for n in range(3)]
    assert [a.status_code for a in answers[:2]] == [200, 200]
    assert_error(answers[2], 429)
    assert int(answers[2]["Retry-After"]) >= 1


def test_asking_for_deletion_ends_the_tokens_and_erasure_leaves_none(api, user, make_token):
    from accounts import deletion
    from api.models import AccessToken, Application

    token = make_token(user)
    Application.objects.create(name="hers", user=user, client_type="confidential")
    assert api.get(ME, token=token).status_code == 200
    due = deletion.request_deletion(user=user)
    assert_error(api.get(ME, token=token), 401)
    assert not AccessToken.objects.filter(user=user).exists()
    assert deletion.erase(user_id=user.pk, now=due)
    assert not Application.objects.filter(user=user).exists()


def test_an_unverified_account_may_not_post_where_the_site_asks_for_it(
    api, user, make_token, settings
):
    settings.REQUIRE_EMAIL_VERIFICATION = True
    assert_error(api.post("/api/v1/statuses", {"status": "hi"}, token=make_token(user)), 403)


@pytest.mark.parametrize("body", [b"null", b"[]", b"1", b'"text"', b"\x00", b"{"])
@pytest.mark.parametrize("path", ["/api/v1/statuses", "/api/v1/apps"])
def test_a_body_that_is_no_json_object_is_a_422(client, user, make_token, body, path):
    answer = client.post(
        path,
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {make_token(user)}"},
    )
    assert_error(answer, 422)
