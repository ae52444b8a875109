"""posts.page_queries: the array parameters every page's plain SQL passes."""

import pytest
from django.db import connection

from posts import page_queries

pytestmark = pytest.mark.django_db

AWKWARD = ['a"b', "back\\slash", "comma,here", "{brace}", " space ", "NULL", "", "汉字"]


def _round_trip(values: list, sql_type: str) -> list:
    params: dict[str, object] = {}
    among = page_queries.among(values, params, "values", sql_type)
    placeholders = ", ".join(f"(%(v{n})s)" for n in range(len(values)))
    params.update({f"v{n}": value for n, value in enumerate(values)})
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT x FROM (VALUES {placeholders}) t(x) WHERE x {among}", params)
        return sorted(row[0] for row in cursor.fetchall())


def test_any_string_is_found_as_itself():
    assert _round_trip(AWKWARD, "text") == sorted(AWKWARD)


def test_strings_with_nothing_to_escape_are_found_as_themselves():
    # The common case (keys, ids) skips escaping, but still quotes every element.
    plain = [value for value in AWKWARD if '"' not in value and "\\" not in value]
    assert len(plain) == len(AWKWARD) - 2
    assert _round_trip(plain, "text") == sorted(plain)


def test_integers_are_found_as_themselves():
    assert _round_trip([3, -17, 2**40], "bigint") == [-17, 3, 2**40]


def test_an_empty_list_finds_nothing():
    with connection.cursor() as cursor:
        params: dict[str, object] = {}
        cursor.execute(
            f"SELECT 1 WHERE 'A' {page_queries.among([], params, 'none', 'text')}", params
        )
        assert cursor.fetchall() == []
