"""Mastodon's paging on the site's cursors (``feed_project.pagination``).

A client pages by status ids: ``max_id`` (older than), ``since_id`` (the newest
above), ``min_id`` (the ones just above, for going back up), ``max_id`` with
either, and ``limit`` (20, at most 40; more is cut to 40, as Mastodon does).
The ids turn into timeline keys (``posts.ids``) and the keys into a ``Cursor``:

- ``max_id`` alone: ``before``;
- ``since_id``: both ends, newest first from ``max_id`` (or the top);
- ``min_id``: ``after`` (the scan up from it); with ``max_id`` too, what it
  finds at or above ``max_id`` is dropped (``Paging.keep``), so a page is
  the items just above ``min_id``, as Mastodon's.

Lists paged by other cursors (notifications, people, likes) subclass ``Paging``
with their own ids, so every list pages by one rule.

The answer's ``Link`` header names the next page (older: ``max_id`` of the
last item, when there is more) and the previous one (``min_id`` of the
first), with the request's other parameters, as Mastodon's does.
"""

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from ninja import Schema

from feed_project.pagination import Cursor
from feed_project.refusals import Invalid
from posts import ids

DEFAULT_LIMIT = 20
MAX_LIMIT = 40
T = TypeVar("T")
PAGING = ("max_id", "since_id", "min_id")


class Paging(Schema):
    """Mastodon's paging parameters over one list's cursors.

    A list says how an id it hands out becomes its cursor (``cursor_of``: None
    for a value that is none, a 422), what lies above every cursor (``TOP``, the
    upper end for ``since_id`` alone) and how cursors order (``order``: as text
    unless a list says otherwise).
    """

    max_id: str | None = None
    since_id: str | None = None
    min_id: str | None = None
    limit: int = DEFAULT_LIMIT

    TOP: ClassVar[str] = ids.HIGHEST_KEY
    WHAT: ClassVar[str] = "status id"
    MOST: ClassVar[int] = MAX_LIMIT

    @classmethod
    def cursor_of(cls, value: str) -> str | None:
        try:
            return ids.key_of_decimal(value)
        except ids.InvalidKey:
            return None

    @classmethod
    def order(cls, cursor: str) -> Any:
        return cursor

    @property
    def size(self) -> int:
        return max(1, min(self.limit, self.MOST))

    def bounds(self) -> tuple[str | None, str | None, str | None]:
        """(max, since, min) as the list's cursors."""
        found = []
        for name in PAGING:
            value = getattr(self, name)
            cursor = self.cursor_of(value) if value not in (None, "") else None
            if value not in (None, "") and cursor is None:
                raise Invalid(f"{name} is not a {self.WHAT}")
            found.append(cursor)
        high, since, low = found
        return high, since, low

    def cursor(self) -> Cursor:
        high, since, low = self.bounds()
        if low is not None:
            return Cursor(after=low)
        if since is not None:
            return Cursor(before=high or self.TOP, after=since)
        return Cursor(before=high)

    def keep(self, items: list[T], key: Callable[[T], str]) -> list[T]:
        """A page's items (newest first) to answer: a ``min_id`` page drops what lies at
        or above ``max_id``."""
        high, _, low = self.bounds()
        if low is None or high is None:
            return items
        top = self.order(high)
        return [item for item in items if self.order(key(item)) < top]


class PageQuery(Paging):
    """Paging by status ids (timeline keys in decimal)."""


def link_header(
    request: HttpRequest, response: HttpResponse, first: str | None, last: str | None, more: bool
) -> None:
    """``Link`` with rel="next" (when ``more``) and rel="prev", given the page's first
    and last status ids (None: an empty page, no links)."""
    if first is None or last is None:
        return
    kept = [(k, v) for k, v in request.GET.items() if k not in PAGING]
    base = request.build_absolute_uri(request.path)
    parts = []
    if more:
        parts.append(f'<{base}?{urlencode([*kept, ("max_id", last)])}>; rel="next"')
    parts.append(f'<{base}?{urlencode([*kept, ("min_id", first)])}>; rel="prev"')
    response["Link"] = ", ".join(parts)
