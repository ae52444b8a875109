"""Cursor pagination shared by every list: never OFFSET (seed 001).

A list is newest first. ``?before=C`` asks for the items older than cursor C,
``?after=C`` for the items newer than C. Selectors fetch one row more than
the page so they know whether another page exists.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


class BadCursor(ValueError):
    """A ?before= or ?after= value that is not a cursor of this list (a 400)."""


@dataclass(frozen=True)
class Cursor:
    before: str | None = None
    after: str | None = None

    def __post_init__(self) -> None:
        if self.before is not None and self.after is not None:
            raise BadCursor("use before or after, not both")

    @property
    def newer_pages(self) -> bool:
        return self.after is not None


@dataclass
class Page(Generic[T]):
    items: list[T]
    older: str | None = None  # cursor of the rel="next" link
    newer: str | None = None  # cursor of the rel="prev" link
    notices: list[str] = field(default_factory=list)


def make_page(rows: Sequence[T], *, cursor: Cursor, limit: int, key: Callable[[T], str]) -> Page[T]:
    """Cut ``rows`` (limit + 1 fetched, in scan order) into a page with links.

    Rows come newest first for a first or ``before`` page, and oldest first for
    an ``after`` page (the scan walks up from the cursor).
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
