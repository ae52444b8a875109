"""Mastodon's paging on the site's cursors (``feed_project.pagination``).

A client pages by status ids: ``max_id`` (older than), ``since_id`` (the newest
above), ``min_id`` (the ones just above, for going back up), ``max_id`` with
either, and ``limit`` (20, at most 40; more is cut to 40, as Mastodon does).
The ids turn into timeline keys (``posts.ids``) and the keys into a ``Cursor``:

- ``max_id`` alone: ``before``;
- ``since_id``: both ends, newest first from ``max_id`` (or the top);
- ``min_id``: ``after`` (the scan up from it); with ``max_id`` too, what it
  finds at or above ``max_id`` is dropped (``PageQuery.keep``), so a page is
  the items just above ``min_id``, as Mastodon's.

The answer's ``Link`` header names the next page (older: ``max_id`` of the
last item, when there is more) and the previous one (``min_id`` of the
first), with the request's other parameters, as Mastodon's does.
"""

from collections.abc import Callable
from typing import TypeVar
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


def key_of_param(name: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    try:
        return ids.key_of_decimal(value)
    except ids.InvalidKey:
        raise Invalid(f"{name} is not a status id") from None


class PageQuery(Schema):
    max_id: str | None = None
    since_id: str | None = None
    min_id: str | None = None
    limit: int = DEFAULT_LIMIT

    @property
    def size(self) -> int:
        return max(1, min(self.limit, MAX_LIMIT))

    def bounds(self) -> tuple[str | None, str | None, str | None]:
        """(max, since, min) as timeline keys."""
        return (
            key_of_param("max_id", self.max_id),
            key_of_param("since_id", self.since_id),
            key_of_param("min_id", self.min_id),
        )

    def cursor(self) -> Cursor:
        """The cursor in timeline keys."""
        high, since, low = self.bounds()
        if low is not None:
            return Cursor(after=low)
        if since is not None:
            return Cursor(before=high or ids.HIGHEST_KEY, after=since)
        return Cursor(before=high)

    def keep(self, items: list[T], key: Callable[[T], str]) -> list[T]:
        """A page's items (newest first) to answer: a ``min_id`` page drops what lies at
        or above ``max_id``."""
        high, _, low = self.bounds()
        if low is None or high is None:
            return items
        return [item for item in items if key(item) < high]


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
