"""``bench_http --api``: its token reads the reader's home timeline, a status's in-process
cost is measured on the reader's first page, and the report judges the target."""

import pytest
from django.core.management import CommandError, call_command

from bench import http_api
from bench.http import Figures, RunOptions, Sample, Target, World
from posts.services import repost
from tests.factories import PostFactory


@pytest.fixture
def world(bob, alice, carol, django_capture_on_commit_callbacks):
    """Bob follows Alice, who posted three times and reposted a post of Carol's."""
    with django_capture_on_commit_callbacks(execute=True):
        posts = PostFactory.create_batch(3, author=alice)
        repost(user=alice, post=PostFactory(author=carol))
    return World(reader=bob.username, profile=alice.username, detail=posts[0].pk)


def test_bench_http_api_refuses_a_database_not_named_for_it(db):
    with pytest.raises(CommandError, match="'bench'"):
        call_command("bench_http", "--api", "--quick")


def test_the_api_target_reads_the_readers_home_timeline_with_its_token(client, world):
    html, api = http_api.targets(world)
    assert (html.path, html.header) == ("/", None)
    name, value = api.header.split(": ", 1)
    response = client.get(api.path, headers={name: value})
    assert response.status_code == 200
    assert len(response.json()) == 4  # three posts and the repost
    assert "Link" in response


def test_a_status_cost_is_measured_on_the_first_page(world):
    cost = http_api.status_cost(world, iterations=2)
    assert cost.statuses == 4
    assert cost.pages == 2
    assert cost.shape_us > 0
    assert cost.schema_us > 0


def _figures(name: str, rps: list[float]) -> Figures:
    samples = [Sample(int(r * 10), 10.0, 5.0, 9.0, r * 0.05, r * 0.01, 0.0) for r in rps]
    return Figures(Target(name, "/", 20), samples)


@pytest.mark.parametrize(("api_rps", "verdict"), [(90, "met"), (70, "not met")])
def test_the_report_judges_the_api_at_the_median_of_its_ratios(api_rps, verdict):
    figures = [_figures("html", [100] * 5), _figures("api", [api_rps] * 5)]
    lines = http_api.report(figures, RunOptions(rounds=5), http_api.StatusCost(20, 2, 150, 120))
    assert lines[-1].endswith(f"{api_rps / 100:.2f}x, {verdict}")
    assert "150 CPU-us" in lines[-2]
