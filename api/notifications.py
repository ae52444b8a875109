"""``/api/v1/notifications`` and ``/api/v2/notifications``: the site's notifications.

Read through the notifications page's selectors
(``timelines.notifications.selectors``), so the API hides what the page hides
(people blocked either way or muted, posts with a muted word); dismissing one,
clearing all and reading up to a marker are the room's services, which keep
the site's unread count. A notification's id is its row id in decimal: the
page's own cursor, increasing with time, and without leading zeros, so ids
compare as Mastodon's clients compare them (by length, then as text).

Mastodon's Notification, the kinds as its types and the grouping: ``api.notification_entities``.
"""

from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema

from api import entities, schemas
from api.auth import Token
from api.notification_entities import (
    GROUP_HOURS,
    GROUPABLE,
    KINDS_OF_TYPE,
    TYPE_OF_KIND,
    GroupedNotifications,
    NotificationOut,
    group_key,
    grouped,
    notification,
    shown,
    type_of,
    with_statuses,
)
from api.paging import Paging, link_header
from api.schemas import Entity
from api.statuses import post_id_of
from feed_project.pagination import Cursor
from feed_project.refusals import Invalid, NotFound
from timelines.notifications import selectors, services
from timelines.notifications.models import Notification

router = Router(tags=["notifications"])
NOT_FOUND = "Record not found"

DEFAULT_LIMIT = 40
MAX_LIMIT = 80
UNREAD_LIMIT = 100
MAX_UNREAD_LIMIT = 1000


class Filters(Schema):
    """Mastodon's filters; lists arrive as ``types[]`` (Mastodon.py, most apps) or ``types``."""

    types: list[str] = Field(default_factory=list, alias="types[]")
    types_plain: list[str] = Field(default_factory=list, alias="types")
    exclude_types: list[str] = Field(default_factory=list, alias="exclude_types[]")
    exclude_plain: list[str] = Field(default_factory=list, alias="exclude_types")
    account_id: str | None = None

    def only(self) -> selectors.Only:
        """The selector's filter: Mastodon's types as the site's kinds (an unknown type
        matches nothing, as on Mastodon), and the account."""
        wanted = set(self.types) | set(self.types_plain)
        unwanted = set(self.exclude_types) | set(self.exclude_plain)
        kinds = set(TYPE_OF_KIND)
        if wanted:
            kinds = {kind for kind in kinds if TYPE_OF_KIND[kind] in wanted}
        kinds = {kind for kind in kinds if TYPE_OF_KIND[kind] not in unwanted}
        actor_id = None
        if self.account_id:
            if not self.account_id.isascii() or not self.account_id.isdigit():
                raise Invalid("account_id is not an account id")
            if len(self.account_id) > 18:
                raise Invalid("account_id is not an account id")
            actor_id = int(self.account_id)
        return selectors.Only(kinds=kinds, actor_id=actor_id)


class NotificationPage(Filters, Paging):
    """Mastodon's paging, by notification ids (their row ids)."""

    limit: int = DEFAULT_LIMIT
    TOP: ClassVar[str] = "9" * 18  # above every row id, for a since_id page
    WHAT: ClassVar[str] = "notification id"
    MOST: ClassVar[int] = MAX_LIMIT

    @classmethod
    def cursor_of(cls, value: str) -> str | None:
        return str(int(value)) if selectors.is_cursor(value) else None

    @classmethod
    def order(cls, cursor: str) -> Any:
        return int(cursor)


class GroupedPage(NotificationPage):
    grouped_types: list[str] = Field(default_factory=list, alias="grouped_types[]")
    grouped_plain: list[str] = Field(default_factory=list, alias="grouped_types")
    expand_accounts: str | None = None  # accounts come whole either way
    include_filtered: bool = False  # nothing is filtered apart

    def groupable(self) -> set[str]:
        asked = set(self.grouped_types) | set(self.grouped_plain)
        return set(GROUPABLE) & asked if asked else set(GROUPABLE)


class UnreadQuery(Filters):
    limit: int = UNREAD_LIMIT

    @property
    def cap(self) -> int:
        return max(1, min(self.limit, MAX_UNREAD_LIMIT))


class Count(Entity):
    count: int


class Empty(Entity):
    pass


def _links(request: HttpRequest, response: HttpResponse, page: Any, notes: list) -> None:
    first = str(notes[0].pk) if notes else None
    last = str(notes[-1].pk) if notes else None
    link_header(request, response, first, last, more=page.older is not None)


@router.get("/v1/notifications", auth=Token("read:notifications"), response=list[NotificationOut])
def notifications(
    request: HttpRequest, response: HttpResponse, query: Query[NotificationPage]
) -> list[dict[str, Any]]:
    page = selectors.notifications_page(
        user=request.user, cursor=query.cursor(), limit=query.size, only=query.only()
    )
    kept = query.keep(page.items, lambda note: str(note.pk))
    _links(request, response, page, kept)
    notes, statuses = with_statuses(request, kept)
    link = entities.Links(request)
    return [notification(note, statuses, link) for note in notes]


def _one(request: HttpRequest, notification_id: str) -> Notification:
    if not selectors.is_cursor(notification_id):
        raise NotFound(NOT_FOUND)
    return selectors.notification_of(user=request.user, notification_id=int(notification_id))


@router.post("/v1/notifications/clear", auth=Token("write:notifications"), response=Empty)
def clear(request: HttpRequest) -> dict[str, Any]:
    services.clear_all(user=request.user)
    return {}


@router.get("/v1/notifications/unread_count", auth=Token("read:notifications"), response=Count)
def unread_count(request: HttpRequest, query: Query[UnreadQuery]) -> dict[str, int]:
    """The unread notifications the list would show (those the site counts unread:
    ``read_at``, which the notifications marker sets), at most ``limit``."""
    unread = selectors.unread(user=request.user, only=query.only(), limit=query.cap)
    return {"count": len(unread)}


@router.get(
    "/v1/notifications/{notification_id}",
    auth=Token("read:notifications"),
    response=NotificationOut,
)
def one(request: HttpRequest, notification_id: str) -> dict[str, Any]:
    notes, statuses = with_statuses(request, [_one(request, notification_id)])
    if not notes:
        raise NotFound(NOT_FOUND)
    return notification(notes[0], statuses, entities.Links(request))


@router.post(
    "/v1/notifications/{notification_id}/dismiss",
    auth=Token("write:notifications"),
    response=Empty,
)
def dismiss(request: HttpRequest, notification_id: str) -> dict[str, Any]:
    if not selectors.is_cursor(notification_id):
        raise NotFound(NOT_FOUND)
    services.dismiss(user=request.user, notification_ids=[int(notification_id)])
    return {}


@router.get("/v2/notifications", auth=Token("read:notifications"), response=GroupedNotifications)
def grouped_notifications(
    request: HttpRequest, response: HttpResponse, query: Query[GroupedPage]
) -> dict[str, Any]:
    page = selectors.notifications_page(
        user=request.user, cursor=query.cursor(), limit=query.size, only=query.only()
    )
    kept = query.keep(page.items, lambda note: str(note.pk))
    _links(request, response, page, kept)
    return grouped(request, kept, query.groupable())


@router.get("/v2/notifications/unread_count", auth=Token("read:notifications"), response=Count)
def unread_group_count(request: HttpRequest, query: Query[UnreadQuery]) -> dict[str, int]:
    """How many groups the unread notifications make (at most ``limit`` notifications read)."""
    unread = selectors.unread(user=request.user, only=query.only(), limit=query.cap)
    return {"count": len({group_key(note) for note in unread if type_of(note)})}


def _members_of(request: HttpRequest, key: str) -> list[Notification]:
    """The notifications of one group, newest first (at most a page's worth)."""
    kind, _, rest = key.partition("-")
    if kind == "ungrouped":
        return [_one(request, rest)]
    if kind not in GROUPABLE:
        raise NotFound(NOT_FOUND)
    status_id, _, window = rest.rpartition("-") if kind != "follow" else ("", "", rest)
    # Seven digits of hours reach past the year 3000: no later window is a group's.
    if not window.isascii() or not window.isdigit() or len(window) > 7:
        raise NotFound(NOT_FOUND)
    start = datetime.fromtimestamp(int(window) * 3600, tz=UTC)
    only = selectors.Only(
        kinds=KINDS_OF_TYPE[kind],
        post_id=post_id_of(status_id) if kind != "follow" else None,
        created_from=start,
        created_before=start + timedelta(hours=GROUP_HOURS),
    )
    page = selectors.notifications_page(
        user=request.user, cursor=Cursor(), limit=MAX_LIMIT, only=only
    )
    if not page.items:
        raise NotFound(NOT_FOUND)
    return page.items


@router.get(
    "/v2/notifications/{group_key}",
    auth=Token("read:notifications"),
    response=GroupedNotifications,
)
def notification_group(request: HttpRequest, group_key: str) -> dict[str, Any]:
    answer = grouped(request, _members_of(request, group_key), set(GROUPABLE))
    if not answer["notification_groups"]:
        raise NotFound(NOT_FOUND)
    return answer


@router.get(
    "/v2/notifications/{group_key}/accounts",
    auth=Token("read:notifications"),
    response=list[schemas.Account],
)
def notification_group_accounts(request: HttpRequest, group_key: str) -> list[dict[str, Any]]:
    """The people of a group, newest first, each once."""
    members = shown(_members_of(request, group_key))
    if not members:
        raise NotFound(NOT_FOUND)
    link = entities.Links(request)
    people = {note.actor_id: note.actor for note in members}
    return [entities.account(person, link) for person in people.values()]


@router.post(
    "/v2/notifications/{group_key}/dismiss",
    auth=Token("write:notifications"),
    response=Empty,
)
def dismiss_group(request: HttpRequest, group_key: str) -> dict[str, Any]:
    """Dismiss every notification of a group."""
    members = _members_of(request, group_key)
    services.dismiss(user=request.user, notification_ids=[note.pk for note in members])
    return {}
