import pytest
from django.core.management import CommandError, call_command

from bench import search as bench
from posts.search import full_text_query


def test_bench_search_refuses_a_database_not_named_for_it(db):
    # It empties the users and posts tables: never on a database of value.
    with pytest.raises(CommandError, match="searchbench"):
        call_command("bench_search", "--quick")


def test_bench_search_queries_all_have_something_to_look_for():
    for query in (*bench.ENGLISH_QUERIES, *bench.CHINESE_QUERIES):
        assert full_text_query(query) is not None, query
