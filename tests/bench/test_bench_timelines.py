"""The benchmark command runs end to end on a small world (its figures are not judged here)."""

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db(transaction=True)
def test_bench_timelines_quick_prints_every_figure():
    out = StringIO()
    # --no-worker: the fan-out runs in process through the task functions;
    # the worker path is exercised by the benchmark itself (docs/BENCHMARKS.md).
    call_command("bench_timelines", "--quick", "--no-worker", stdout=out)
    output = out.getvalue()
    for label in (
        "1. Fan-out of one post to",
        "raw limit: one INSERT ... SELECT",
        "raw limit: one Lua call per chunk",
        "CPU per post (median)",
        "live Redis caches before the post",
        "2. Home feed of bench_reader",
        "page 1: home_feed, cache warm",
        "page 1: home_feed, cache dropped",
        "page 5: pull_keys + hydrate",
        "page 5: pull_reference_keys + hydrate",
        "page 5: plain query + hydrate",
        "a trim sweep alone:",
        "3. Rebuild of an inactive reader",
        "Inbox.rebuild",
        "Summary",
        "Fan-out lag",
        "Home page 1, cached, p50",
        "Home page 5, cached, p99",
        "Rebuild, p50",
        "4. First page of bench_wide (follows 300 accounts, no inbox)",
        "plain query: author IN followees",
        "First page, 300 followees, no inbox, p50",
    ):
        assert label in output
    # The set-based rebuild (one UNION ALL leg per author) writes what Inbox.rebuild does.
    assert "the raw limit wrote the same inbox as Inbox.rebuild: yes" in output
