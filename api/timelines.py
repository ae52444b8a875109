"""``/api/v1/timelines/...``: the home feed and the public timeline.

The home feed is the site's (``timelines.home.home_feed``: the inbox, big
accounts pulled in, and pull past the inbox's cap, so a client pages back to
the first post); an entry whose key is a repost's answers as a reblog. The
public timeline is ``/public/``'s page (``posts.public_timeline.public_page``):
every post here is local, so ``local`` changes nothing.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from api import entities, schemas
from api.auth import Token
from api.paging import PageQuery, link_header
from posts import ids
from posts.public_timeline import public_page
from timelines.home import home_feed

router = Router(tags=["timelines"])


def _answer(
    request: HttpRequest, response: HttpResponse, entries: list, more: bool
) -> list[dict[str, Any]]:
    first = ids.decimal_of_key(entries[0][0]) if entries else None
    last = ids.decimal_of_key(entries[-1][0]) if entries else None
    link_header(request, response, first, last, more=more)
    return entities.statuses(request, entries)


@router.get("/v1/timelines/home", auth=Token("read:statuses"), response=list[schemas.Status])
def home(request: HttpRequest, response: HttpResponse, query: Query[PageQuery]) -> list:
    page = home_feed(reader=request.user, cursor=query.cursor(), limit=query.size)
    items = query.keep(page.items, lambda item: item.key)
    entries = [(item.key, item.post) for item in items]
    return _answer(request, response, entries, more=page.older is not None)


@router.get(
    "/v1/timelines/public",
    auth=Token("read:statuses", optional=True),
    response=list[schemas.Status],
)
def public(
    request: HttpRequest, response: HttpResponse, query: Query[PageQuery], local: bool = False
) -> list:
    viewer_id = request.user.pk if request.user.is_authenticated else None
    page = public_page(viewer_id=viewer_id, cursor=query.cursor(), limit=query.size)
    posts = query.keep(page.items, lambda post: post.timeline_key)
    entries = [(post.timeline_key, post) for post in posts]
    return _answer(request, response, entries, more=page.older is not None)
