import pytest
from django.core.management import CommandError, call_command

from bench.http import HttpBenchError, parse_wrk
from tests.factories import PostFactory

WRK_OUTPUT = """Running 10s test @ http://127.0.0.1:8000/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    21.50ms    4.10ms  80.00ms   90.00%
    Req/Sec   186.00     20.00   220.00     70.00%
  Latency Distribution
     50%   20.12ms
     75%   23.00ms
     90%   26.00ms
     99%    1.02s
  1862 requests in 10.01s, 30.00MB read
Requests/sec:    186.01
Transfer/sec:      3.00MB
"""


def test_bench_http_refuses_a_database_not_named_for_it(db):
    # It may empty the users and posts tables: never on a database of value.
    with pytest.raises(CommandError, match="'bench'"):
        call_command("bench_http", "--quick")


def test_wrk_output_gives_requests_seconds_and_percentiles_in_milliseconds():
    assert parse_wrk(WRK_OUTPUT) == (1862, 10.01, 20.12, 1020.0)


def test_wrk_output_with_errors_is_refused():
    with pytest.raises(HttpBenchError, match="not 2xx"):
        parse_wrk(WRK_OUTPUT + "  Non-2xx or 3xx responses: 12\n")


def test_bare_page_renders_twenty_posts_under_the_bench_urlconf(client, alice, settings):
    settings.ROOT_URLCONF = "bench.http_urls"
    PostFactory.create_batch(25, author=alice)
    response = client.get("/bench/bare/")
    assert response.status_code == 200
    assert response.content.decode().count("data-post-id=") == 20
