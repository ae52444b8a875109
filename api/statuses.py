"""``/api/v1/statuses``: post, read and delete a status, act on it, and read its thread,
its history, its source and who liked or reposted it.

Posting goes through the site's compose form (``posts.forms.PostForm``: the same
length rule, links counted as 23) and ``posts.services.create_post``; a reply's
parent is found as the site's reply box finds it
(``posts.selectors.original_to_act_on``), reading one as the detail page does
(``visible_post``), deleting as its delete button does (``delete_own_post``).

Likes and reposts, and their undoing, find the post as the site's buttons do
(``original_to_act_on``: a repost's original, the viewer's to see) and call
their services (``posts.services.like``, ``repost``...), limited as those
buttons are; a thread is the detail page's (``posts.selectors.thread``), the
history the history page's (``posts.edits``).
"""

from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from ninja import Query, Router, Schema

from accounts.addresses import may_post
from api import entities, schemas
from api.auth import Token
from api.errors import RateLimited, Unprocessable
from api.paging import PageQuery, link_header
from feed_project.pagination import Cursor, Page
from feed_project.ratelimits import retry_after
from feed_project.refusals import Forbidden, NotFound
from posts import edits, ids, selectors, services
from posts.forms import PostForm
from posts.models import Post

router = Router(tags=["statuses"])
NOT_FOUND = "Record not found"
UNVERIFIED = "Confirm your e-mail address first: the link is in the mail we sent."


class NewStatus(Schema):
    """What a client may send; null is as absent, as on Mastodon."""

    status: str | None = None
    in_reply_to_id: str | int | None = None  # a string, as Mastodon sends; a number too
    spoiler_text: str | None = None
    visibility: str | None = None
    sensitive: bool | None = None
    media_ids: list[str] | None = None
    language: str | None = None


def post_id_of(status_id: str, missing: str = NOT_FOUND) -> str:
    """The post id a status id names; NotFound for anything that is no status id."""
    try:
        return ids.timeline_key_to_post_id(ids.key_of_decimal(status_id))
    except ids.InvalidKey:
        raise NotFound(missing) from None


def one(request: HttpRequest, post: Post) -> dict[str, Any]:
    """A post as a status: a repost wraps its original."""
    shown = post
    if post.repost_of_id:
        shown = selectors.original_to_act_on(
            viewer_id=_viewer_id(request), post_id=post.repost_of_id
        )
    found = entities.statuses(request, [(post.timeline_key, shown)])
    if not found:
        raise NotFound(NOT_FOUND)
    return found[0]


def _viewer_id(request: HttpRequest) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


def _checked(body: NewStatus) -> dict[str, Any]:
    """The site's form over the request, its errors as a 422 with each field's."""
    if body.media_ids:
        raise Unprocessable("Validation failed: media", {"media_ids": ["Not supported yet."]})
    level = entities.SITE_LEVELS.get(body.visibility or "public")
    if level is None:
        message = "Visibility must be one of public, unlisted, private, direct"
        raise Unprocessable(f"Validation failed: {message}", {"visibility": [message]})
    data = QueryDict(mutable=True)
    data.update(
        {
            "text": body.status or "",
            "spoiler_text": body.spoiler_text or "",
            "visibility": str(level),
        }
    )
    form = PostForm(data)
    if not form.is_valid():
        details = {
            "status" if field == "text" else field: [str(message) for message in messages]
            for field, messages in form.errors.items()
        }
        summary = "; ".join(message for messages in details.values() for message in messages)
        raise Unprocessable(f"Validation failed: {summary}", details)
    return form.cleaned_data


@router.post("/v1/statuses", auth=Token("write:statuses"), response=schemas.Status)
def create(request: HttpRequest, body: NewStatus) -> dict[str, Any]:
    if not may_post(request.user):  # the compose box's rule (accounts.decorators)
        raise Forbidden(UNVERIFIED)
    wait = retry_after(request, "post")  # limited as the site's compose box is
    if wait is not None:
        raise RateLimited(wait)
    cleaned = _checked(body)
    parent = None
    if body.in_reply_to_id:
        parent = selectors.original_to_act_on(
            viewer_id=request.user.pk, post_id=post_id_of(str(body.in_reply_to_id))
        )
    created = services.create_post(
        author=request.user,
        text=cleaned["text"],
        in_reply_to=parent,
        spoiler_text=cleaned["spoiler_text"],
        visibility=cleaned["visibility"],
    )
    return one(request, created)


@router.get(
    "/v1/statuses/{status_id}",
    auth=Token("read:statuses", optional=True),
    response=schemas.Status,
)
def read(request: HttpRequest, status_id: str) -> dict[str, Any]:
    post = selectors.visible_post(
        viewer_id=_viewer_id(request), post_id=post_id_of(status_id), missing=NOT_FOUND
    )
    return one(request, post)


@router.delete(
    "/v1/statuses/{status_id}", auth=Token("write:statuses"), response=schemas.DeletedStatus
)
def delete(request: HttpRequest, status_id: str) -> dict[str, Any]:
    """Delete one's own status; the answer is the status as it was, with its ``text``
    (Mastodon's "delete and redraft")."""
    post = services.delete_own_post(user=request.user, post_id=post_id_of(status_id))
    shown = one(request, post)
    return {**shown, "text": post.text, "spoiler_text": post.spoiler_text}


class Context(Schema):
    ancestors: list[schemas.Status]
    descendants: list[schemas.Status]


class StatusEdit(Schema):
    content: str
    spoiler_text: str
    sensitive: bool
    created_at: str
    account: schemas.Account
    poll: dict[str, Any] | None
    media_attachments: list[schemas.MediaAttachment]
    emojis: list[Any]


class StatusSource(Schema):
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
        viewer_id=_viewer_id(request), post_id=post_id_of(status_id), missing=NOT_FOUND
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
    own key (``posts.selectors.like_key``)."""
    post = _shown(request, status_id)
    page = selectors.likers_page(
        post, viewer_id=_viewer_id(request), cursor=query.cursor(), limit=query.size
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
    page = selectors.reposters_page(
        post, viewer_id=_viewer_id(request), cursor=query.cursor(), limit=query.size
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
    thread = selectors.thread(post, viewer_id=_viewer_id(request), cursor=Cursor())
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
    post = edits.post_with_history(viewer_id=_viewer_id(request), post_id=post_id_of(status_id))
    page = entities.hydrate(request, [(post.timeline_key, post)])
    return [entities.status_edit(post, version, page) for version in reversed(edits.history(post))]


@router.get("/v1/statuses/{status_id}/source", auth=Token("read:statuses"), response=StatusSource)
def source(request: HttpRequest, status_id: str) -> dict[str, Any]:
    """What the status's author typed, to edit it: for whoever may see it, as on Mastodon."""
    post = edits.post_with_history(viewer_id=_viewer_id(request), post_id=post_id_of(status_id))
    return {
        "id": ids.decimal_of_key(post.timeline_key),
        "text": post.text,
        "spoiler_text": post.spoiler_text,
    }
