"""Mastodon's paging over the site's lists of people (followers, following, follow
requests, blocks, mutes), whose cursors are the lists' own (``relations.selectors``:
when the follow, block or request happened, and whom) rather than status ids.

A client reads those cursors as opaque ids from the ``Link`` header, as
Mastodon's are ids of its Follow and Block rows, and sends them back as
``max_id`` (older), ``min_id`` (just newer) or ``since_id`` (the newest above
it); a value that is no cursor of such a list is a 422.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Schema

from api.paging import DEFAULT_LIMIT, MAX_LIMIT, link_header
from feed_project.pagination import Cursor, Page
from feed_project.refusals import Invalid
from relations.selectors import Relation, is_relation_cursor

# Above every list's cursor (the last day datetime holds), for since_id without max_id.
HIGHEST = "253402214400000000_0"


def _cursor_of(name: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not is_relation_cursor(value):
        raise Invalid(f"{name} is not an id of this list")
    return value


class RelationPageQuery(Schema):
    max_id: str | None = None
    since_id: str | None = None
    min_id: str | None = None
    limit: int = DEFAULT_LIMIT

    @property
    def size(self) -> int:
        return max(1, min(self.limit, MAX_LIMIT))

    def cursor(self) -> Cursor:
        high = _cursor_of("max_id", self.max_id)
        since = _cursor_of("since_id", self.since_id)
        low = _cursor_of("min_id", self.min_id)
        if low is not None:
            return Cursor(before=high, after=low)
        if since is not None:
            return Cursor(before=high or HIGHEST, after=since)
        return Cursor(before=high)


def answer(request: HttpRequest, response: HttpResponse, page: Page[Relation]) -> list[Any]:
    """The page's people, with a ``Link`` header of its cursors."""
    items = page.items
    first = items[0].cursor if items else None
    last = items[-1].cursor if items else None
    link_header(request, response, first, last, more=page.older is not None)
    return [relation.user for relation in items]
