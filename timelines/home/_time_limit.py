"""Statements under a time limit: the read-time pull of big accounts must never hold
up the page that merges it in (seed 002), alone (``timelines.home._pull``) or inside
a page's statement (``timelines.home._items.hydrate_after``).

The limit is a ``SET LOCAL statement_timeout``, over when its transaction is.
Outside a transaction, on plain PostgreSQL, the limit and the statement go in
one round trip (``_one_trip``) where BEGIN, the SET, the statement and COMMIT
took four. Inside a transaction (and on Citus) a savepoint holds the SET, and
the limit in force before is put back after it (releasing a savepoint keeps
what a SET LOCAL in it set).
"""

import functools
import hashlib
import re

import psycopg
from django.db import ProgrammingError, connection, transaction

from feed_project import sharding


def rows(
    sql: str, params: dict[str, object], *, timeout_ms: int | None, generic_plan: bool = False
) -> list[tuple]:
    """A statement's rows. With ``timeout_ms``, PostgreSQL cancels it past that many
    milliseconds (a DatabaseError). ``generic_plan``: in the one round trip, the
    statement is planned once, not for each call's values (``_one_trip``)."""
    if timeout_ms is None:
        with connection.cursor() as db:
            db.execute(sql, params)
            return db.fetchall()
    if connection.get_autocommit() and sharding.on_plain_postgresql(connection):
        return _one_trip(sql, params, timeout_ms=timeout_ms, generic_plan=generic_plan)
    nested = connection.in_atomic_block
    with transaction.atomic(), connection.cursor() as db:
        db.execute(
            "SELECT current_setting('statement_timeout'),"
            " set_config('statement_timeout', %s, true)",
            [str(int(timeout_ms))],
        )
        before, _ = db.fetchone()
        db.execute(sql, params)
        found = db.fetchall()
        if nested:
            db.execute("SELECT set_config('statement_timeout', %s, true)", [before])
    return found


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@functools.lru_cache(maxsize=64)
def _prepared_form(sql: str) -> tuple[str, str, str]:
    """A statement as a server-side prepared one: its name, its body (``$n`` for each
    ``%(name)s``, numbered in order of first use) and its EXECUTE's arguments."""
    names: list[str] = []

    def numbered(match: re.Match) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    body = _PLACEHOLDER.sub(numbered, sql)
    name = "timed_" + hashlib.blake2b(body.encode(), digest_size=8).hexdigest()
    return name, body, ", ".join(f"%({arg})s" for arg in names)


def _one_trip(
    sql: str, params: dict[str, object], *, timeout_ms: int, generic_plan: bool
) -> list[tuple]:
    """``rows`` outside a transaction: ``SET LOCAL statement_timeout`` and an EXECUTE
    of the statement, prepared on this connection, as one simple query.

    PostgreSQL runs the statements of one simple query as one implicit transaction,
    so the limit holds for this statement alone. A simple query binds its values
    on the client (psycopg's ClientCursor), so the statement is prepared by name,
    once a connection, rather than parsed anew every time, and the limit goes with
    it in one round trip, not four (docs/BENCHMARKS.md has the figures).
    Its text may be as long as it likes: psycopg parses only the EXECUTE's. The
    server says when the statement is not prepared, so nothing here keeps track.

    PostgreSQL plans a prepared statement for each call's values until a generic
    plan looks no dearer; for a page's statement with big accounts merged in, it
    never did (0 generic plans in 60 calls on the bench world), and planning its
    4 KB cost more than running it: ``generic_plan`` asks for the generic plan."""
    name, body, arguments = _prepared_form(sql)
    connection.ensure_connection()  # a page's first statement may open it
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(psycopg.ClientCursor(connection.connection)) as db:
        sets = [f"SET LOCAL statement_timeout = {int(timeout_ms)}"]
        if generic_plan:
            sets.append("SET LOCAL plan_cache_mode = force_generic_plan")
        execute = "; ".join([*sets, f"EXECUTE {name}({arguments})"])
        try:
            db.execute(execute, params)
        except ProgrammingError as error:
            # Not prepared on this connection yet, or no longer: psycopg deallocates
            # every prepared statement after a rollback once it has prepared its own.
            if not isinstance(error.__cause__, psycopg.errors.InvalidSqlStatementName):
                raise
            db.execute(f"PREPARE {name} AS {body}")
            db.execute(execute, params)
        for _ in sets:
            db.nextset()
        return db.fetchall()
