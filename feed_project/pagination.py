"""Cursor pagination shared by every list: never OFFSET (seed 001).

A list is newest first. ``?before=C`` asks for the items older than cursor C,
``?after=C`` for the items newer than C, and both at once for the items
between them (newest first: the gap-filling range Mastodon clients use).
Selectors fetch one row more than the page so they know whether another page
exists. A cursor is checked once, where it enters (``Cursor.from_request``),
by the validator of its list's kind of key; selectors trust it.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest

T = TypeVar("T")


class BadCursor(BadRequest):
    """A ?before= or ?after= value that is not a cursor of this list: Django answers 400."""


@dataclass(frozen=True)
class Cursor:
    before: str | None = None
    after: str | None = None

    @classmethod
    def from_request(cls, request: HttpRequest, valid: Callable[[str], bool]) -> "Cursor":
        """The ``?before=`` / ``?after=`` cursor of a request; BadCursor unless ``valid``
        says yes to each end given."""
        cursor = cls(before=request.GET.get("before"), after=request.GET.get("after"))
        for value in (cursor.before, cursor.after):
            if value is not None and not valid(value):
                raise BadCursor("Not a cursor of this list.")
        return cursor

    @property
    def newer_pages(self) -> bool:
        """Scanning up from ``after`` (oldest first); a range with both ends scans down."""
        return self.after is not None and self.before is None

    @property
    def first_page(self) -> bool:
        return self.before is None and self.after is None


@dataclass
class Page(Generic[T]):
    items: list[T]
    older: str | None = None  # cursor of the rel="next" link
    newer: str | None = None  # cursor of the rel="prev" link
    notices: list[str] = field(default_factory=list)


def make_page(rows: Sequence[T], *, cursor: Cursor, limit: int, key: Callable[[T], str]) -> Page[T]:
    """Cut ``rows`` (limit + 1 fetched, in scan order) into a page with links.

    Rows come newest first for a first, ``before`` or two-ended page, and
    oldest first for an ``after`` page (the scan walks up from the cursor).
    """
    has_more = len(rows) > limit
    items = list(rows[:limit])
    if cursor.newer_pages:
        items.reverse()
        newer = key(items[0]) if has_more and items else None
        older = key(items[-1]) if items else cursor.after
        return Page(items, older=older, newer=newer)
    older = key(items[-1]) if has_more else None
    newer = key(items[0]) if cursor.before is not None and items else None
    return Page(items, older=older, newer=newer)


def keyset_page(
    rows: QuerySet, *, field: str, cursor: Cursor, limit: int, parse: Callable[[str], Any] = str
) -> Page:
    """One page of ``rows`` by a unique, ordered ``field``, newest (highest) first.

    The cursor is the field's value as text; ``parse`` turns it back (``int``
    for an id). One query: the page and one row more.
    """
    if cursor.after is not None:
        rows = rows.filter(**{f"{field}__gt": parse(cursor.after)})
    if cursor.before is not None:
        rows = rows.filter(**{f"{field}__lt": parse(cursor.before)})
    rows = rows.order_by(field if cursor.newer_pages else f"-{field}")
    return make_page(
        list(rows[: limit + 1]),
        cursor=cursor,
        limit=limit,
        key=lambda row: str(getattr(row, field)),
    )


def keyset_sql(column: str, cursor: Cursor, params: dict[str, object]) -> tuple[str, str]:
    """``keyset_page``'s filters and order on ``column``, for a statement written as
    SQL: the cursor's bounds (`` AND column > %(after)s``...) and the scan's
    direction (ASC for newer pages). The statement fetches ``limit + 1`` rows and
    ``make_page`` cuts them, as ``keyset_page`` does."""
    bounds = []
    for name, operator in (("after", ">"), ("before", "<")):
        value = getattr(cursor, name)
        if value is not None:
            params[name] = value
            bounds.append(f" AND {column} {operator} %({name})s")
    return "".join(bounds), "ASC" if cursor.newer_pages else "DESC"
