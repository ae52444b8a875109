"""What the API's fuzz tests share: hypothesis's settings for request-driving tests, the
hostile values they send, and the check every answer must pass (JSON, never a 5xx)."""

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Each example is a few requests against the test database: no deadline, no shrinking
# database kept between runs, and the function-scoped client and token are fine.
FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
COMMON = ["", "\x00", "-1", "0", "9" * 40, "1e9", "<script>", "' OR 1=1 --", "١٢٣"]


def nasty(*extra: str) -> st.SearchStrategy[str]:
    """Hostile text: the usual suspects, ``extra`` ones of an area, any text, and numbers
    far outside every id's range."""
    return st.one_of(
        st.sampled_from([*COMMON, *extra]),
        st.text(max_size=60),
        st.integers(-(2**70), 2**90).map(str),
    )


def json_and_not_5xx(response):
    assert response.status_code < 500, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    return response
