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

from django.http import HttpRequest
from ninja import Query, Router, Schema

from api import entities, hashtags, schemas
from api.auth import Token
from api.paging import PageQuery
from posts.search import checked_query, search_people, search_posts
from posts.tags import tags_matching
from relations.visibility import followed_among

router = Router(tags=["search"])
KINDS = ("accounts", "statuses", "hashtags")


class Results(Schema):
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
    first_page = query.cursor().first_page
    if "accounts" in wanted and first_page:
        people = search_people(query=text.removeprefix("@"), viewer=viewer, limit=query.size)
        if following:
            followed = followed_among(viewer.pk, [p.pk for p in people]) if viewer.pk else set()
            people = [person for person in people if person.pk in followed]
        found["accounts"] = [entities.account(person, link) for person in people]
    if "statuses" in wanted:
        page = search_posts(query=text, viewer=viewer, cursor=query.cursor(), limit=query.size)
        posts = query.keep(page.items, lambda post: post.timeline_key)
        found["statuses"] = entities.statuses(request, [(p.timeline_key, p) for p in posts])
    if "hashtags" in wanted and first_page:
        found["hashtags"] = [hashtags.tag(name, link) for name in tags_matching(text)]
    return found
