"""``/api/v1/accounts/:id/follow`` and the other relationship endpoints: follows, blocks,
mutes, follow requests, and the lists of them.

Each does what the profile's buttons and the follow requests page do
(``relations.views``, ``relations.request_views``), through the same services:
a follow of a locked account is a request (``relations.services.follow``
decides), a block ends follows both ways, and each is limited as the buttons
are (the ``follow`` rate). Each answers Mastodon's Relationship, read for any
number of people in one statement (``relations.selectors.relationships``).

The site's mutes have no end and do not touch notifications: ``duration`` and
``notifications`` are accepted and left unused (``muting_notifications`` is
always false). A follow's ``reblogs`` and ``notify`` are the site's follow
options (hide reposts, be told of posts); a request keeps none until accepted.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema

from accounts.models import User
from api import entities, schemas
from api.accounts import person
from api.auth import Token
from api.errors import RateLimited
from api.relation_paging import RelationPageQuery, answer
from api.schemas import Entity
from feed_project.ratelimits import retry_after
from feed_project.refusals import NotFound
from relations import selectors, services

router = Router(tags=["relationships"])
NO_REQUEST = "Record not found"
MAX_IDS = 100  # people asked about at once; more are left out


class Relationship(Entity):
    id: str
    following: bool
    showing_reblogs: bool
    notifying: bool
    languages: list[str] | None
    followed_by: bool
    blocking: bool
    blocked_by: bool
    muting: bool
    muting_notifications: bool
    requested: bool
    requested_by: bool
    domain_blocking: bool
    endorsed: bool
    note: str


class FollowOptions(Schema):
    """Mastodon's follow options; absent ones stay as they are."""

    reblogs: bool | None = None
    notify: bool | None = None
    languages: list[str] | None = None


class MuteOptions(Schema):
    notifications: bool | None = None
    duration: int | None = None


def relationships(viewer: User, user_ids: list[int]) -> list[dict[str, Any]]:
    """Relationships of the viewer with each of ``user_ids``, in their order: one query."""
    found = selectors.relationships(viewer.pk, user_ids)
    return [
        {
            "id": str(user_id),
            **standing,
            "languages": None,
            "muting_notifications": False,
            "domain_blocking": False,
            "endorsed": False,
            "note": "",
        }
        for user_id, standing in found.items()
    ]


def _with(request: HttpRequest, user: User) -> dict[str, Any]:
    return relationships(request.user, [user.pk])[0]


def _limited(request: HttpRequest) -> None:
    """The buttons' rate (``follow``: every change to the graph)."""
    wait = retry_after(request, "follow")
    if wait is not None:
        raise RateLimited(wait)


ID_PARAMETER = {
    "name": "id[]",
    "in": "query",
    "required": False,
    "schema": {"type": "array", "items": {"type": "string"}},
    "style": "form",
    "explode": True,
}


@router.get(
    "/v1/accounts/relationships",
    auth=Token("read:follows"),
    response=list[Relationship],
    openapi_extra={"parameters": [ID_PARAMETER]},
)
def relationships_of(request: HttpRequest) -> list[dict[str, Any]]:
    """``id[]`` (or ``id``) of each person; ids of no one are left out."""
    asked = [*request.GET.getlist("id[]"), *request.GET.getlist("id")]
    wanted = []
    for value in asked:
        if value.isascii() and value.isdigit() and len(value) <= 18 and int(value) not in wanted:
            wanted.append(int(value))
    wanted = wanted[:MAX_IDS]
    if not wanted:
        return []
    # Accounts being deleted are gone, as their profiles are (profile_person).
    known = set(
        User.objects.filter(pk__in=wanted, deletion_due_at__isnull=True).values_list(
            "pk", flat=True
        )
    )
    return relationships(request.user, [pk for pk in wanted if pk in known])


@router.post(
    "/v1/accounts/{account_id:account_id}/follow",
    auth=Token("write:follows"),
    response=Relationship,
)
def follow(
    request: HttpRequest, account_id: str, body: FollowOptions | None = None
) -> dict[str, Any]:
    _limited(request)
    followee = person(request, account_id)
    services.follow(follower=request.user, followee=followee)
    body = body or FollowOptions()
    if body.reblogs is not None or body.notify is not None:
        now = _with(request, followee)
        hide = not body.reblogs if body.reblogs is not None else not now["showing_reblogs"]
        notify = body.notify if body.notify is not None else now["notifying"]
        if now["following"] and (hide, notify) != (not now["showing_reblogs"], now["notifying"]):
            services.set_follow_options(
                follower=request.user, followee=followee, hide_reposts=hide, notify_posts=notify
            )
    return _with(request, followee)


@router.post(
    "/v1/accounts/{account_id:account_id}/unfollow",
    auth=Token("write:follows"),
    response=Relationship,
)
def unfollow(request: HttpRequest, account_id: str) -> dict[str, Any]:
    _limited(request)
    followee = person(request, account_id)
    services.unfollow(follower=request.user, followee=followee)
    return _with(request, followee)


@router.post(
    "/v1/accounts/{account_id:account_id}/block", auth=Token("write:blocks"), response=Relationship
)
def block(request: HttpRequest, account_id: str) -> dict[str, Any]:
    _limited(request)
    target = person(request, account_id)
    services.block(user=request.user, target=target)
    return _with(request, target)


@router.post(
    "/v1/accounts/{account_id:account_id}/unblock",
    auth=Token("write:blocks"),
    response=Relationship,
)
def unblock(request: HttpRequest, account_id: str) -> dict[str, Any]:
    _limited(request)
    target = person(request, account_id)
    services.unblock(user=request.user, target=target)
    return _with(request, target)


@router.post(
    "/v1/accounts/{account_id:account_id}/mute", auth=Token("write:mutes"), response=Relationship
)
def mute(request: HttpRequest, account_id: str, body: MuteOptions | None = None) -> dict[str, Any]:
    _limited(request)
    target = person(request, account_id)
    services.mute(user=request.user, target=target)
    return _with(request, target)


@router.post(
    "/v1/accounts/{account_id:account_id}/unmute", auth=Token("write:mutes"), response=Relationship
)
def unmute(request: HttpRequest, account_id: str) -> dict[str, Any]:
    _limited(request)
    target = person(request, account_id)
    services.unmute(user=request.user, target=target)
    return _with(request, target)


def _accounts(request: HttpRequest, people: list[User]) -> list[dict[str, Any]]:
    link = entities.Links(request)
    return [entities.account(user, link) for user in people]


@router.get("/v1/follow_requests", auth=Token("read:follows"), response=list[schemas.Account])
def follow_requests(
    request: HttpRequest, response: HttpResponse, query: Query[RelationPageQuery]
) -> list[dict[str, Any]]:
    """The follow requests page's list (``relations.request_views``), newest first."""
    page = selectors.follow_requests_page(
        user=request.user, cursor=query.cursor(), limit=query.size
    )
    return _accounts(request, answer(request, response, query, page))


@router.post(
    "/v1/follow_requests/{account_id:account_id}/authorize",
    auth=Token("write:follows"),
    response=Relationship,
)
def authorize(request: HttpRequest, account_id: str) -> dict[str, Any]:
    _limited(request)
    requester = person(request, account_id)
    if not services.accept_request(user=request.user, requester=requester):
        raise NotFound(NO_REQUEST)
    return _with(request, requester)


@router.post(
    "/v1/follow_requests/{account_id:account_id}/reject",
    auth=Token("write:follows"),
    response=Relationship,
)
def reject(request: HttpRequest, account_id: str) -> dict[str, Any]:
    _limited(request)
    requester = person(request, account_id)
    if not services.reject_request(user=request.user, requester=requester):
        raise NotFound(NO_REQUEST)
    return _with(request, requester)


@router.get("/v1/blocks", auth=Token("read:blocks"), response=list[schemas.Account])
def blocks(
    request: HttpRequest, response: HttpResponse, query: Query[RelationPageQuery]
) -> list[dict[str, Any]]:
    page = selectors.blocks_page(user=request.user, cursor=query.cursor(), limit=query.size)
    return _accounts(request, answer(request, response, query, page))


@router.get("/v1/mutes", auth=Token("read:mutes"), response=list[schemas.Account])
def mutes(
    request: HttpRequest, response: HttpResponse, query: Query[RelationPageQuery]
) -> list[dict[str, Any]]:
    page = selectors.mutes_page(user=request.user, cursor=query.cursor(), limit=query.size)
    return _accounts(request, answer(request, response, query, page))
