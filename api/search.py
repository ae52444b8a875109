"""``/api/v2/search``: accounts, statuses and hashtags, by the site's search (``/search/``).

People and posts are the search page's (``posts.search``: ``search_people`` and
``search_posts``, CJK included), with its rules: blocked people either way are
not found, only public posts are, and the viewer's muted words keep posts out.
A query the page refuses (``checked_query``) is a 422 with its message.

Mastodon pages a search by ``offset``; the site pages by cursor. Statuses page
by ``max_id`` / ``min_id`` (``api.paging``), as timelines do; ``offset`` 0 is
the first page, and past it the answer is empty (an offset would be a scan of
every match before it). ``resolve`` is accepted and does nothing (every account
is local), ``account_id`` and ``exclude_unreviewed`` likewise; ``following``
keeps the people the viewer follows.
"""

from typing import Any, Literal
from urllib.parse import urlsplit

from django.http import HttpRequest
from django.urls import Resolver404, resolve
from ninja import Query, Router

from api import entities, hashtags, schemas, statuses
from api.auth import Token
from api.paging import PageQuery
from api.schemas import Entity
from feed_project.refusals import NotFound
from posts.search import checked_query, search_people, search_posts
from posts.selectors import visible_post
from posts.tags import tags_matching
from relations.selectors import profile_person
from relations.visibility import followed_among

router = Router(tags=["search"])
KINDS = ("accounts", "statuses", "hashtags")


class Results(Entity):
    accounts: list[schemas.Account]
    statuses: list[schemas.Status]
    hashtags: list[hashtags.Tag]


@router.get("/v2/search", auth=Token("read:search", optional=True), response=Results)
def search(
    request: HttpRequest,
    q: str,
    query: Query[PageQuery],
    type: Literal["accounts", "statuses", "hashtags"] | None = None,
    offset: int = 0,
    following: bool = False,
    account_id: str | None = None,
    exclude_unreviewed: bool = False,
) -> dict[str, Any]:
    text = checked_query(q)
    found: dict[str, Any] = {kind: [] for kind in KINDS}
    if not text or offset > 0:
        return found
    wanted = (type,) if type else KINDS
    viewer = request.user
    link = entities.Links(request)
    if text.startswith(link.base + "/"):
        return _resolved(request, text.removeprefix(link.base), wanted, found)
    first_page = query.cursor().first_page
    if "accounts" in wanted and first_page:
        name = _local_name(text, request.get_host())
        people = search_people(query=name, viewer=viewer, limit=query.size)
        if following:
            followed = followed_among(viewer.pk, [p.pk for p in people]) if viewer.pk else set()
            people = [person for person in people if person.pk in followed]
        found["accounts"] = [entities.account(person, link) for person in people]
    if "statuses" in wanted:
        page = search_posts(query=text, viewer=viewer, cursor=query.cursor(), limit=query.size)
        posts = query.keep(page.items, lambda post: post.timeline_key)
        found["statuses"] = entities.statuses(request, [(p.timeline_key, p) for p in posts])
    if "hashtags" in wanted and first_page:
        names = tags_matching(text, limit=query.size)
        found["hashtags"] = hashtags.tags(names, link)
    return found


def _local_name(text: str, host: str) -> str:
    """``@name`` or ``name@this-host``, as clients write an account, as ``name``."""
    name, at, domain = text.removeprefix("@").partition("@")
    return name if at and domain.lower() == host.lower() else text.removeprefix("@")


def _resolved(
    request: HttpRequest, path: str, wanted: tuple[str, ...], found: dict[str, Any]
) -> dict[str, Any]:
    """A link to one of the site's pages, as Mastodon resolves one: the post of a post's
    page (if the viewer may see it, as that page asks) or the person of a profile."""
    try:
        match = resolve(urlsplit(path).path)
    except Resolver404:
        return found
    viewer_id = request.user.pk if request.user.is_authenticated else None
    try:
        if match.view_name == "posts:detail" and "statuses" in wanted:
            post = visible_post(viewer_id=viewer_id, post_id=match.kwargs["post_id"])
            found["statuses"] = [statuses.one(request, post)]
        elif match.view_name == "posts:profile" and "accounts" in wanted:
            person = profile_person(username=match.kwargs["username"], viewer=request.user)
            if not (viewer_id and (person.viewer_blocks or person.blocks_viewer)):
                found["accounts"] = [entities.account(person, entities.Links(request))]
    except NotFound:
        pass  # a link to nothing the viewer may see finds nothing, as a search for it would
    return found
