"""Trends and suggestions: ``/api/v1/trends/tags``, ``/api/v2/suggestions``.

Trending tags are the site's (``/tags/``: ``posts.tags.trending``, the table
the periodic task ``posts.compute_trending`` writes): the tags most people used
in the last 24 hours, at most ten, so ``offset`` and ``limit`` slice ten rows.
The site has no trending posts or links: those answer empty lists. Mastodon
asks no scope of trends; a token, when sent, must still be good.
"""

from typing import Any

from django.http import HttpRequest
from ninja import Router

from api import entities, hashtags, schemas
from api.auth import Token
from posts.tags import trending

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
