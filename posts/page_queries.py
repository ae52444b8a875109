"""Plain SQL for the reads every page repeats, where building a QuerySet costs more CPU
than the query itself.

Each statement keeps the filters its QuerySet had (the shard key first: the SQL
shard-key check of tests/test_sharding.py reads these too) and runs on PostgreSQL
and SQLite alike.
"""

from collections.abc import Callable
from functools import cache

from django.db import connection
from django.db.models.expressions import Col

from accounts.models import User
from posts import ids
from posts.models import Post


def among(
    values: list, params: dict[str, object], name: str = "post_ids", sql_type: str = ids.SQL_TYPE
) -> str:
    """``= ANY(...)`` or ``IN (...)`` of these values (post ids unless ``sql_type`` says
    otherwise), their parameters put in ``params``.

    On PostgreSQL one array, not a parameter per id: the statement's text stays
    the same from page to page, so psycopg parses it once (it caches statements
    of at most 50 parameters; a parameter per id had it parse 4 KB on every
    page). The array goes as its text form, cast: psycopg's dump of a Python
    list cost a large part of the statement's time. SQLite, the
    embedded default, has no arrays: a parameter each.
    """
    if connection.vendor == "postgresql":
        return f"= ANY({array(values, params, name, sql_type)})"
    names = [f"{name}_{n}" for n in range(len(values))]
    params.update(zip(names, values, strict=True))
    return f"IN ({', '.join(f'%({key})s' for key in names)})"


def array(
    values: list, params: dict[str, object], name: str = "post_ids", sql_type: str = ids.SQL_TYPE
) -> str:
    """PostgreSQL: an array of these values, as ``among`` sends it."""
    params[name] = _array_literal(values)
    return f"%({name})s::text::{sql_type}[]"


def _array_literal(values: list) -> str:
    """A PostgreSQL array's text form: ``{"A1","B2"}`` of strings, ``{1,2}`` of
    integers."""
    if all(isinstance(value, int) for value in values):
        return "{" + ",".join(str(value) for value in values) + "}"
    text = "".join(values)
    if '"' not in text and "\\" not in text:  # timeline keys and post ids: nothing to escape
        return '{"' + '","'.join(values) + '"}'
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"


def column(sql: str, params: dict[str, object]) -> list:
    """The first column of the statement's rows."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


@cache
def _converters(model, vendor: str) -> list[tuple[int, Col, Callable]]:
    """(column index, column, converter) of the backend's converters of a model's row."""
    table = model._meta.db_table
    return [
        (at, field.get_col(table), converter)
        for at, field in enumerate(model._meta.concrete_fields)
        for converter in connection.ops.get_db_converters(field.get_col(table))
    ]


@cache
def _attnames(model) -> list[str]:
    return [field.attname for field in model._meta.concrete_fields]


def columns(model, table: str | None = None) -> str:
    """The model's concrete columns, comma separated (of ``table``, an alias, when
    given): what ``from_row`` takes, in order."""
    prefix = f"{table}." if table else ""
    return ", ".join(f"{prefix}{field.column}" for field in model._meta.concrete_fields)


def from_row(model, values: tuple):
    """An instance of ``model`` from its concrete columns' values, as the ORM would make
    it: the backend's converters applied (SQLite hands back datetimes as text)."""
    converters = _converters(model, connection.vendor)
    if converters:
        row = list(values)
        for at, col, converter in converters:
            row[at] = converter(row[at], col, connection)
        values = tuple(row)
    return model.from_db(connection.alias, _attnames(model), values)


def models(model, sql: str, params: dict[str, object]) -> list:
    """Instances of ``model`` from a statement selecting ``columns(model)``."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [from_row(model, row) for row in cursor.fetchall()]


# What lists show of a post's author; anything else would load on first use (the
# pages' query-count tests would see it).
AUTHOR_FIELDS = ["id", "username", "display_name", "avatar"]


def post_and_author_columns(post: str, author: str) -> str:
    """The columns ``post_of`` takes: the ``post`` row's, then the ``author`` row's
    ``AUTHOR_FIELDS`` but the id (the post's ``author_id``)."""
    return ", ".join(
        [
            columns(Post, post),
            *(f"{author}.{name}" for name in AUTHOR_FIELDS[1:]),
        ]
    )


def author_of(values: tuple) -> User:
    """A person as lists show them, from the ``AUTHOR_FIELDS`` columns."""
    return User.from_db(connection.alias, AUTHOR_FIELDS, values)


# How many columns ``post_and_author_columns`` selects: a row holding two posts
# (an entry and its original) splits there.
POST_AND_AUTHOR_WIDTH = len(Post._meta.concrete_fields) + len(AUTHOR_FIELDS) - 1


def post_of(values: tuple) -> Post:
    """A post with its author, from ``post_and_author_columns``."""
    width = len(Post._meta.concrete_fields)
    post = from_row(Post, values[:width])
    post.author = author_of((post.author_id, *values[width:]))
    return post


# Posts whatever their state, joined to their authors (``p`` and ``a``), found by
# their authors too: the primary key, and the shard key.
_BY_IDS_SQL = """
SELECT {columns}
FROM {post} p
JOIN {user} a ON a.id = p.author_id
WHERE p.author_id {among_author_ids} AND p.id {among_post_ids}
"""


def by_ids(post_ids: list[str], params: dict[str, object], *, columns: str) -> str:
    """The statement selecting ``columns`` of these posts and their authors."""
    authors = sorted({ids.author_of_post_id(post_id) for post_id in post_ids})
    return _BY_IDS_SQL.format(
        columns=columns,
        post=Post._meta.db_table,
        user=User._meta.db_table,
        among_author_ids=among(authors, params, "author_ids", "bigint"),
        among_post_ids=among(post_ids, params),
    )


def posts_with_authors(post_ids: list[str]) -> list[Post]:
    """These posts, whatever their state, each with its author (``post_of``)."""
    if not post_ids:
        return []
    params: dict[str, object] = {}
    sql = by_ids(post_ids, params, columns=post_and_author_columns("p", "a"))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [post_of(row) for row in cursor.fetchall()]
