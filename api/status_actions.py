"""Acting on a status and reading what hangs off it: likes, reposts and their undoing,
who liked or reposted it, its thread, its edits' history and its source
(``/api/v1/statuses/:id/...``, mounted on ``api.statuses``' router).

Likes and reposts, and their undoing, find the post as the site's buttons do
(``posts.selectors.original_to_act_on``: a repost's original, the viewer's to
see) and call their services (``posts.services.like``, ``repost``...), limited
as those buttons are; who did them is ``posts.engagement``; a thread is the
detail page's (``posts.selectors.thread``), the history the history page's
(``posts.edits``).
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema

from accounts.addresses import may_post
from api import entities, schemas
from api.auth import Token
from api.errors import RateLimited, Unprocessable
from api.paging import PageQuery, link_header
from api.schemas import Entity
from api.status_lookup import NOT_FOUND, UNVERIFIED, one, post_id_of, viewer_id
from feed_project.pagination import Cursor, Page
from feed_project.ratelimits import retry_after
from feed_project.refusals import Forbidden, NotFound
from posts import edits, engagement, ids, selectors, services
from posts.models import Post

router = Router(tags=["statuses"])


class Context(Entity):
    ancestors: list[schemas.Status]
    descendants: list[schemas.Status]


class StatusEdit(Entity):
    content: str
    spoiler_text: str
    sensitive: bool
    created_at: str
    account: schemas.Account
    poll: dict[str, Any] | None
    media_attachments: list[schemas.MediaAttachment]
    emojis: list[Any]


class StatusSource(Entity):
    id: str
    text: str
    spoiler_text: str


class ReblogOptions(Schema):
    """Mastodon's reblog takes a ``visibility``; the site's repost is as open as what it
    shares, so a known level is accepted and the original's is kept."""

    visibility: str | None = None


def _to_act_on(request: HttpRequest, status_id: str) -> Post:
    """The post a like or repost of ``status_id`` acts on, as the site's buttons find it,
    after the buttons' rate limit."""
    wait = retry_after(request, "like")
    if wait is not None:
        raise RateLimited(wait)
    return selectors.original_to_act_on(
        viewer_id=request.user.pk, post_id=post_id_of(status_id), missing=NOT_FOUND
    )


def _as_now(request: HttpRequest, post: Post) -> dict[str, Any]:
    """The post as a status after an action: read again, as the action changed its
    counters in the database (the buttons' ``_back_to`` does the same)."""
    return one(request, selectors.get_visible_post(post.pk) or post)


@router.post(
    "/v1/statuses/{status_id}/favourite", auth=Token("write:favourites"), response=schemas.Status
)
def favourite(request: HttpRequest, status_id: str) -> dict[str, Any]:
    post = _to_act_on(request, status_id)
    services.like(user=request.user, post=post)  # a second like is the first one
    return _as_now(request, post)


@router.post(
    "/v1/statuses/{status_id}/unfavourite", auth=Token("write:favourites"), response=schemas.Status
)
def unfavourite(request: HttpRequest, status_id: str) -> dict[str, Any]:
    post = _to_act_on(request, status_id)
    services.unlike(user=request.user, post=post)
    return _as_now(request, post)


@router.post(
    "/v1/statuses/{status_id}/reblog", auth=Token("write:statuses"), response=schemas.Status
)
def reblog(
    request: HttpRequest, status_id: str, body: ReblogOptions | None = None
) -> dict[str, Any]:
    """The repost, as a status wrapping the original (Mastodon's answer)."""
    if body is not None and body.visibility and body.visibility not in entities.SITE_LEVELS:
        message = "Visibility must be one of public, unlisted, private, direct"
        raise Unprocessable(f"Validation failed: {message}", {"visibility": [message]})
    if not may_post(request.user):  # the repost button's rule (accounts.decorators)
        raise Forbidden(UNVERIFIED)
    original = services.shareable(_to_act_on(request, status_id))
    shared = services.repost(user=request.user, post=original)  # a second is the first
    now = selectors.get_visible_post(original.pk) or original
    found = entities.statuses(request, [(shared.timeline_key, now)])
    if not found:
        raise NotFound(NOT_FOUND)
    return found[0]


@router.post(
    "/v1/statuses/{status_id}/unreblog", auth=Token("write:statuses"), response=schemas.Status
)
def unreblog(request: HttpRequest, status_id: str) -> dict[str, Any]:
    """The original, no longer reposted by the viewer."""
    post = _to_act_on(request, status_id)
    services.undo_repost(user=request.user, post=post)
    return _as_now(request, post)


def _people(
    request: HttpRequest, response: HttpResponse, query: PageQuery, page: Page
) -> list[dict[str, Any]]:
    """A page of (key, person) as Accounts, with its Link header: the next page starts
    where the scan stopped (``page.older``), past people left out of this one."""
    items = query.keep(page.items, lambda item: item[0])
    link = entities.Links(request)
    last = page.older or (items[-1][0] if items else None)
    first = items[0][0] if items else last
    link_header(
        request,
        response,
        ids.decimal_of_key(first) if first else None,
        ids.decimal_of_key(last) if last else None,
        more=page.older is not None,
    )
    return [entities.account(person, link) for _, person in items]


def _shown(request: HttpRequest, status_id: str) -> Post:
    """The post whose thread or people are asked for: a repost's original, the viewer's
    to see (a repost's detail page is its original's)."""
    return selectors.original_to_act_on(
        viewer_id=viewer_id(request), post_id=post_id_of(status_id), missing=NOT_FOUND
    )


@router.get(
    "/v1/statuses/{status_id}/favourited_by",
    auth=Token("read:accounts", optional=True),
    response=list[schemas.Account],
)
def favourited_by(
    request: HttpRequest, response: HttpResponse, status_id: str, query: Query[PageQuery]
) -> list[dict[str, Any]]:
    """Who liked the status, newest like first; a like's id in the Link header is its
    own key (``posts.engagement.like_key``)."""
    post = _shown(request, status_id)
    page = engagement.likers_page(
        post, viewer_id=viewer_id(request), cursor=query.cursor(), limit=query.size
    )
    return _people(request, response, query, page)


@router.get(
    "/v1/statuses/{status_id}/reblogged_by",
    auth=Token("read:accounts", optional=True),
    response=list[schemas.Account],
)
def reblogged_by(
    request: HttpRequest, response: HttpResponse, status_id: str, query: Query[PageQuery]
) -> list[dict[str, Any]]:
    """Who reposted the status, newest first, paged by the reposts' status ids."""
    post = _shown(request, status_id)
    page = engagement.reposters_page(
        post, viewer_id=viewer_id(request), cursor=query.cursor(), limit=query.size
    )
    return _people(request, response, query, page)


@router.get(
    "/v1/statuses/{status_id}/context",
    auth=Token("read:statuses", optional=True),
    response=Context,
)
def context(request: HttpRequest, status_id: str) -> dict[str, Any]:
    """The thread as the detail page shows it: the ancestors the viewer may see, oldest
    first, and the page's replies (its first page, the newest), oldest first."""
    post = _shown(request, status_id)
    thread = selectors.thread(post, viewer_id=viewer_id(request), cursor=Cursor())
    ancestors = [parent for parent in thread.ancestors if parent is not None]
    descendants = list(reversed(thread.replies.items))
    shown = entities.statuses(
        request, [(item.timeline_key, item) for item in [*ancestors, *descendants]]
    )
    by_id = {found["id"]: found for found in shown}

    def statuses_of(posts: list[Post]) -> list[dict[str, Any]]:
        wanted = (ids.decimal_of_key(item.timeline_key) for item in posts)
        return [by_id[status_id] for status_id in wanted if status_id in by_id]

    return {"ancestors": statuses_of(ancestors), "descendants": statuses_of(descendants)}


@router.get(
    "/v1/statuses/{status_id}/history",
    auth=Token("read:statuses", optional=True),
    response=list[StatusEdit],
)
def history(request: HttpRequest, status_id: str) -> list[dict[str, Any]]:
    """Every version of the status, oldest (as first published) first, as Mastodon lists
    them; a status never edited has one."""
    post = edits.post_with_history(viewer_id=viewer_id(request), post_id=post_id_of(status_id))
    page = entities.hydrate(request, [(post.timeline_key, post)])
    return [entities.status_edit(post, version, page) for version in reversed(edits.history(post))]


@router.get("/v1/statuses/{status_id}/source", auth=Token("read:statuses"), response=StatusSource)
def source(request: HttpRequest, status_id: str) -> dict[str, Any]:
    """What the status's author typed, to edit it: for whoever may see it, as on Mastodon."""
    post = edits.post_with_history(viewer_id=viewer_id(request), post_id=post_id_of(status_id))
    return {
        "id": ids.decimal_of_key(post.timeline_key),
        "text": post.text,
        "spoiler_text": post.spoiler_text,
    }
