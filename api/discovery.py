"""Trends and suggestions: ``/api/v1/trends/tags``, ``/api/v2/suggestions``.

Trending tags are the site's (``/tags/``: ``posts.tags.trending``, the table
the periodic task ``posts.compute_trending`` writes): the tags most people used
in the last 24 hours, at most ten, so ``offset`` and ``limit`` slice ten rows.
The site has no trending posts or links: those answer empty lists. Mastodon
asks no scope of trends; a token, when sent, must still be good.

Suggestions are the site's "who to follow" (``timelines.suggestions``): each
reader's are ranked by a task into rows of their own, read here as the sidebar
and /suggestions/ read them. Dismissing one drops its row (``ranking.forget``),
as following, blocking or muting the person does; the next ranking may suggest
them again.
"""

from typing import Any

from django.http import HttpRequest
from ninja import Router

from accounts.models import User
from api import entities, hashtags, schemas
from api.auth import Token
from api.schemas import Entity
from posts.tags import trending
from timelines.suggestions.ranking import KEPT, forget, suggestions_for

router = Router(tags=["discovery"])
TRENDS_LIMIT = 20  # Mastodon's most per page


def _trending_tags(request: HttpRequest, limit: int, offset: int) -> list[dict[str, Any]]:
    link = entities.Links(request)
    start = max(0, offset)
    rows = trending()[start : start + max(1, min(limit, TRENDS_LIMIT))]
    return [hashtags.tag(row.tag, link, people=row.authors) for row in rows]


@router.get("/v1/trends/tags", auth=Token("", optional=True), response=list[hashtags.Tag])
def trending_tags(request: HttpRequest, limit: int = 10, offset: int = 0) -> list[dict[str, Any]]:
    return _trending_tags(request, limit, offset)


@router.get("/v1/trends", auth=Token("", optional=True), response=list[hashtags.Tag])
def trends(request: HttpRequest, limit: int = 10, offset: int = 0) -> list[dict[str, Any]]:
    """The old path of trending tags (Mastodon 3.0 to 3.4)."""
    return _trending_tags(request, limit, offset)


@router.get("/v1/trends/statuses", auth=Token("", optional=True), response=list[schemas.Status])
def trending_statuses(request: HttpRequest, limit: int = 20, offset: int = 0) -> list[Any]:
    return []


@router.get("/v1/trends/links", auth=Token("", optional=True), response=list[dict[str, Any]])
def trending_links(request: HttpRequest, limit: int = 10, offset: int = 0) -> list[Any]:
    return []


SUGGESTION_LIMIT = 40
SUGGESTION_MAX = 80


class FollowSuggestion(Entity):
    source: str
    sources: list[str]
    account: schemas.Account


@router.get("/v2/suggestions", auth=Token("read:accounts"), response=list[FollowSuggestion])
def suggestions(request: HttpRequest, limit: int = SUGGESTION_LIMIT) -> list[dict[str, Any]]:
    """The reader's suggestions, best first: friends of friends, then popular accounts
    (the ranking does not say which is which, so each is "friends_of_friends")."""
    rows = suggestions_for(request.user.pk, limit=max(1, min(limit, SUGGESTION_MAX, KEPT)))
    # The rows copy only a name and a picture; an Account needs the person's counts.
    wanted = [row.suggested_id for row in rows]
    # Someone whose account is being deleted since the ranking is gone, as their profile is.
    people = User.objects.filter(deletion_due_at__isnull=True).in_bulk(wanted)
    link = entities.Links(request)
    return [
        {
            "source": "past_interactions",
            "sources": ["friends_of_friends"],
            "account": entities.account(people[row.suggested_id], link),
        }
        for row in rows
        if row.suggested_id in people
    ]


@router.delete(
    "/v1/suggestions/{account_id}", auth=Token("write:accounts"), response=dict[str, Any]
)
def dismiss_suggestion(request: HttpRequest, account_id: str) -> dict[str, Any]:
    """Mastodon answers an empty object, whether or not the person was suggested."""
    if account_id.isascii() and account_id.isdigit() and len(account_id) <= 18:
        forget(request.user.pk, int(account_id))
    return {}
