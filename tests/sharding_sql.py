"""Does a SQL statement route to shards by their distribution column? (tests/test_sharding.py)

A small reader of the SQL this project sends, not a SQL parser: it finds the
tables a statement reads or writes (FROM, JOIN, UPDATE, DELETE FROM, USING,
not an INSERT's target: its rows route by their own values, or come from a
SELECT that is checked), their aliases, and the comparisons ``x = y``, ``x IN (...)``,
``x = ANY(...)`` and ``(x, y) IN (...)``. A distributed table is *pinned*
when its distribution column is compared with a value or a list, or equal to
the distribution column of a colocated table that is pinned (a join Citus
runs inside each shard). Reference tables are never a problem.

Necessary, not sufficient: it does not follow OR branches or tell apart two
subqueries that reuse an alias, so a statement it passes may still be one
Citus cannot plan (the entries statement is: docs/SCALING.md). The run on a
real cluster, ``make test-citus``, is the full check.
"""

import re

from feed_project import sharding

_NAME = r'"?([A-Za-z_][A-Za-z0-9_]*)"?'
_REF = rf"(?:{_NAME}\.)?{_NAME}"
_TABLE = re.compile(
    rf"\b(FROM|JOIN|UPDATE|INTO|USING)\s+{_NAME}(?:\s+(?:AS\s+)?{_NAME})?", re.IGNORECASE
)
# A value, a list or an array; not a subquery (Citus would not prune by it).
_VALUE = r"(?:%s|%\(\w+\)s|\$\d+|-?\d+|'[^']*'|\((?!\s*SELECT\b)|ANY\s*\(|ARRAY\[)"
_COMPARE = re.compile(rf"{_REF}\s*(?:=|\bIN\b)\s*(?:(?P<value>{_VALUE})|{_REF})", re.IGNORECASE)
_TUPLE_IN = re.compile(r"\(\s*((?:[\w\".]+\s*,\s*)*[\w\".]+)\s*\)\s*IN\s*\(", re.IGNORECASE)
_KEYWORDS = {
    "where", "on", "set", "join", "left", "right", "inner", "outer", "cross", "full",
    "group", "order", "limit", "offset", "values", "select", "using", "returning", "as",
    "natural", "lateral", "union", "and", "or", "default", "window", "having", "for",
}  # fmt: skip


def tables_of(sql: str) -> dict[str, str]:
    """alias -> table, for every table of TABLES the statement touches."""
    found: dict[str, str] = {}
    for match in _TABLE.finditer(sql):
        verb, table, alias = match.group(1).upper(), match.group(2), match.group(3)
        if table not in sharding.TABLES:
            continue
        if verb == "INTO":
            continue  # an INSERT's rows route by their values, or by the SELECT checked here
        if alias is None or alias.lower() in _KEYWORDS:
            alias = table
        found[alias] = table
    return found


def unpinned(sql: str) -> list[str]:
    """The distributed tables (as ``alias=table``) the statement does not pin to shards."""
    aliases = tables_of(sql)
    columns = sharding.distributed()

    def resolve(qualifier: str | None, column: str) -> str | None:
        """The alias whose distribution column this reference is, if any."""
        if qualifier is not None:
            table = aliases.get(qualifier)
            return qualifier if table is not None and columns.get(table) == column else None
        # Unqualified: the one table of the statement it can belong to, or
        # else the one named without an alias (a subquery's own table).
        owners = [a for a, t in aliases.items() if columns.get(t) == column]
        if len(owners) > 1:
            owners = [a for a in owners if a == aliases[a]]
        return owners[0] if len(owners) == 1 else None

    pinned: set[str] = set()
    joins: list[tuple[str, str]] = []
    for match in _COMPARE.finditer(sql):
        left = resolve(match.group(1), match.group(2))
        if match.group("value") is not None:
            if left is not None:
                pinned.add(left)
            continue
        right = resolve(match.group(4), match.group(5))
        if left is not None and right is not None:
            joins.append((left, right))
    for match in _TUPLE_IN.finditer(sql):
        for item in match.group(1).split(","):
            parts = [p.strip().strip('"') for p in item.strip().split(".")]
            alias = resolve(parts[0] if len(parts) == 2 else None, parts[-1])
            if alias is not None:
                pinned.add(alias)
    # A join on both distribution columns of colocated tables carries the pin.
    changed = True
    while changed:
        changed = False
        for a, b in joins:
            if sharding.group_of(aliases[a]) != sharding.group_of(aliases[b]):
                continue
            for x, y in ((a, b), (b, a)):
                if x in pinned and y not in pinned:
                    pinned.add(y)
                    changed = True
    return sorted(
        f"{alias}={table}"
        for alias, table in aliases.items()
        if table in columns and alias not in pinned
    )
