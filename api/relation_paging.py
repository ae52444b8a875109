"""Mastodon's paging over the site's lists of people (followers, following, follow
requests, blocks, mutes), whose cursors are the lists' own (``relations.selectors``:
when the follow, block or request happened, and whom) rather than status ids.

A client reads those cursors as opaque ids from the ``Link`` header, as
Mastodon's are ids of its Follow and Block rows, and sends them back as
``max_id`` (older), ``min_id`` (just newer) or ``since_id`` (the newest above
it); a value that is no cursor of such a list is a 422.
"""

from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponse

from api.paging import Paging, link_header
from feed_project.pagination import Page
from relations.selectors import Relation, is_relation_cursor

# Above every list's cursor (the last day datetime holds), for since_id without max_id.
HIGHEST = "253402214400000000_0"


class RelationPageQuery(Paging):
    TOP: ClassVar[str] = HIGHEST
    WHAT: ClassVar[str] = "id of this list"

    @classmethod
    def cursor_of(cls, value: str) -> str | None:
        return value if is_relation_cursor(value) else None

    @classmethod
    def order(cls, cursor: str) -> Any:
        return tuple(int(part) for part in cursor.split("_"))


def answer(
    request: HttpRequest, response: HttpResponse, query: Paging, page: Page[Relation]
) -> list[Any]:
    """The page's people, with a ``Link`` header of its cursors."""
    items = query.keep(page.items, lambda relation: relation.cursor)
    first = items[0].cursor if items else None
    last = items[-1].cursor if items else None
    link_header(request, response, first, last, more=page.older is not None)
    return [relation.user for relation in items]
