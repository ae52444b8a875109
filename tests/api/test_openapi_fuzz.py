"""Every operation of the OpenAPI document (``/api/openapi.json``) fuzzed by
schemathesis: requests made from the document, with a bearer token of every scope
so that the endpoints behind a token are reached, and each answer held to the
document: no 5xx, a documented status, a JSON body of the documented shape, and
the rate limit's headers as documented.

The run is bounded (a few examples an operation, derandomized, no shrinking) so
that it stays short as endpoints are added; it goes through the site's own WSGI
handler, in process, on the test database.
"""

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.scopes import SCOPES
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CHECKS = [
    schemathesis.checks.not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# A deeper run by hand: API_FUZZ_EXAMPLES=100 pytest tests/api/test_openapi_fuzz.py
EXAMPLES_PER_OPERATION = int(os.environ.get("API_FUZZ_EXAMPLES", "5"))


@pytest.fixture(autouse=True)
def _requests_keep_the_test_transaction():
    """The WSGI handler closes the database connection around each request, as Django's
    test client stops it doing: the test's transaction (and its user) must survive."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _rate_limits_on(settings):
    """The limits on, so their headers are held to the document too, with a budget that
    no run spends."""
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "api": ("100000/5m", "100000/5m")}


@pytest.fixture
def bearer(make_token):
    """A token of every scope, for a user with a post, so lists are not all empty."""
    return make_token(UserFactory(username="fuzzer"), " ".join(sorted(SCOPES)))


schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_documented(case, bearer):
    case.call_and_validate(headers={"Authorization": f"Bearer {bearer}"}, checks=CHECKS)


def test_every_operation_documents_the_errors(client):
    document = client.get("/api/openapi.json").json()
    assert document["components"]["schemas"]["Error"]["required"] == ["error"]
    operations = [op for ops in document["paths"].values() for op in ops.values()]
    assert operations
    for operation in operations:
        for status in ("401", "403", "404", "422", "429"):
            answer = operation["responses"][status]["content"]["application/json"]
            assert answer["schema"] == {"$ref": "#/components/schemas/Error"}
        for response in operation["responses"].values():
            assert "X-RateLimit-Remaining" in response["headers"]
        assert "Retry-After" in operation["responses"]["429"]["headers"]
