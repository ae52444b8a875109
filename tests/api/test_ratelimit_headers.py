"""Mastodon's rate limit on the API: every answer says where its request stands
(``X-RateLimit-Limit``, ``-Remaining``, ``-Reset``), and past the budget the answer
is a 429 with ``Retry-After`` before any endpoint runs."""

from datetime import UTC, datetime

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ME = "/api/v1/accounts/verify_credentials"


@pytest.fixture
def limits(settings):
    """Limits on, with the API's budget small enough to spend in a test."""

    def set_to(api="5/5m", api_ip="4/5m", **others):
        settings.RATELIMIT_ENABLED = True
        settings.RATELIMIT_RATES = {
            **settings.RATELIMIT_RATES,
            "api": (api, api_ip),
            **others,
        }

    return set_to


def headers_of(answer):
    return (
        int(answer["X-RateLimit-Limit"]),
        int(answer["X-RateLimit-Remaining"]),
        datetime.fromisoformat(answer["X-RateLimit-Reset"]),
    )


def test_every_answer_says_the_limit_and_what_is_left(api, make_token, limits):
    limits()
    token = make_token(UserFactory())
    answers = [
        api.get(ME, token=token),  # a success
        api.get("/api/v1/statuses/nope", token=token),  # a 404
        api.get("/api/v1/no/such/path", token=token),  # the catch-all's 404
        api.post("/api/v1/statuses", {"visibility": "everyone"}, token=token),  # a 422
    ]
    assert [answer.status_code for answer in answers] == [200, 404, 404, 422]
    seen = [headers_of(answer) for answer in answers]
    assert [limit for limit, _, _ in seen] == [5] * 4
    assert [left for _, left, _ in seen] == [4, 3, 2, 1]
    now = datetime.now(UTC)
    assert all(0 < (reset - now).total_seconds() <= 300 for _, _, reset in seen)


def test_past_the_budget_a_429_with_retry_after_and_no_endpoint_runs(api, make_token, limits):
    limits(api="2/5m")
    user = UserFactory()
    token = make_token(user)
    assert [api.get(ME, token=token).status_code for _ in range(2)] == [200, 200]
    refused = api.post("/api/v1/statuses", {"status": "one too many"}, token=token)
    assert refused.status_code == 429
    assert refused.json() == {"error": "Too many requests"}
    assert 1 <= int(refused["Retry-After"]) <= 300
    assert headers_of(refused)[:2] == (2, 0)
    assert not user.posts.exists()
    # Each token has its own budget.
    assert api.get(ME, token=make_token(user)).status_code == 200


def test_without_a_token_the_budget_is_the_address(api, limits):
    limits(api_ip="2/5m")
    answers = [api.get("/api/v1/timelines/public") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert [headers_of(answer)[1] for answer in answers] == [1, 0, 0]


def test_posting_reports_the_stricter_limit_of_posting(api, make_token, limits):
    limits(api="300/5m", post=("2/m", ""))
    token = make_token(UserFactory())
    answers = [api.post("/api/v1/statuses", {"status": f"n{n}"}, token=token) for n in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert [headers_of(answer)[:2] for answer in answers] == [(2, 1), (2, 0), (2, 0)]
    assert int(answers[2]["Retry-After"]) >= 1
    # Reading is counted against the budget alone.
    assert headers_of(api.get(ME, token=token))[:2] == (300, 296)


def test_with_limits_off_no_headers(api, make_token, settings):
    settings.RATELIMIT_ENABLED = False
    answer = api.get(ME, token=make_token(UserFactory()))
    assert answer.status_code == 200
    assert not answer.has_header("X-RateLimit-Limit")


def test_browser_apps_may_read_them(client, make_token, limits):
    limits()
    answer = client.get(
        ME,
        headers={
            "Authorization": f"Bearer {make_token(UserFactory())}",
            "Origin": "https://elk.example",
        },
    )
    exposed = {name.strip().lower() for name in answer["Access-Control-Expose-Headers"].split(",")}
    assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= exposed
