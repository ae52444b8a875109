import pytest
from django.core.management import CommandError, call_command

from bench import search as bench
from bench import tags as bench_tags
from posts.search import full_text_query


def test_bench_search_refuses_a_database_not_named_for_it(db):
    # It empties the users and posts tables: never on a database of value.
    with pytest.raises(CommandError, match="searchbench"):
        call_command("bench_search", "--quick")


def test_bench_search_queries_all_have_something_to_look_for():
    for query in (*bench.ENGLISH_QUERIES, *bench.CHINESE_QUERIES):
        assert full_text_query(query) is not None, query


@pytest.mark.django_db(transaction=True)
def test_the_tag_page_benchmark_runs_on_a_small_world():
    bench.build_world(bench.QUICK, log=lambda line: None)
    bench_tags.build_tags(log=lambda line: None)

    figures = bench_tags.run(samples=2, log=lambda line: None)

    labels = {(f.label, f.query) for f in figures}
    assert ("tag_page", "news") in labels and ("GET /tags/<tag>/", "news") in labels
    assert ("baseline: IN tag's ids", "news") in labels and ("floor: index only", "news") in labels
    # One live post in ten: 2,000 posts less the deleted (1 in 89), over ten.
    assert next(f for f in figures if f.query == "news").matches == (2_000 - 2_000 // 89) // 10
