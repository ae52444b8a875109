"""``/api/v1/notifications`` and ``/api/v2/notifications``: the site's notifications.

Read through the notifications page's selectors
(``timelines.notifications.selectors``), so the API hides what the page hides
(people blocked either way, posts with a muted word); dismissing one,
clearing all and reading up to a marker are the room's services, which keep
the site's unread count. A notification's id is its row id in decimal: the
page's own cursor, increasing with time, and without leading zeros, so ids
compare as Mastodon's clients compare them (by length, then as text).

The site's kinds map onto Mastodon's types (``TYPE_OF_KIND``): a reply is a
mention, as on Mastodon; "your follow request was accepted" has no Mastodon
type and is left out here. A notification about a post the reader may no
longer read is left out too (Mastodon's have their status or are not shown).

Grouping (``/api/v2``) is Mastodon 4.3's: favourites and reblogs of one status
and follows, each within a twelve-hour window, are a group; every other
notification is a group of its own (``ungrouped-<id>``). A group's key is
computed from the row (type, status, window), so it needs no state, and a
page groups the notifications it holds, as Mastodon's pages do.
"""

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema

from api import entities, schemas
from api.auth import Token
from api.paging import link_header
from api.statuses import post_id_of
from feed_project.pagination import Cursor
from feed_project.refusals import Invalid, NotFound
from timelines.notifications import selectors, services
from timelines.notifications.models import Notification

router = Router(tags=["notifications"])
Kind = Notification.Kind
NOT_FOUND = "Record not found"

TYPE_OF_KIND: dict[str, str] = {
    Kind.FOLLOW: "follow",
    Kind.REQUEST: "follow_request",
    Kind.REPLY: "mention",
    Kind.MENTION: "mention",
    Kind.LIKE: "favourite",
    Kind.REPOST: "reblog",
    Kind.QUOTE: "quote",
    Kind.EDITED: "update",
    Kind.POST: "status",
}
KINDS_OF_TYPE: dict[str, set[str]] = {}
for _kind, _type in TYPE_OF_KIND.items():
    KINDS_OF_TYPE.setdefault(_type, set()).add(_kind)
WITH_STATUS = {"mention", "favourite", "reblog", "quote", "update", "status"}
GROUPABLE = ("favourite", "reblog", "follow")
GROUP_HOURS = 12
SAMPLE_ACCOUNTS = 8
DEFAULT_LIMIT = 40
MAX_LIMIT = 80
UNREAD_LIMIT = 100
MAX_UNREAD_LIMIT = 1000
# The highest row id a cursor may name: the top, for a since_id page.
TOP = "9" * 18


def _notification_id(name: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not selectors.is_cursor(value):
        raise Invalid(f"{name} is not a notification id")
    return str(int(value))


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


class NotificationPage(Filters):
    """Mastodon's paging, by notification ids."""

    max_id: str | None = None
    since_id: str | None = None
    min_id: str | None = None
    limit: int = DEFAULT_LIMIT

    @property
    def size(self) -> int:
        return max(1, min(self.limit, MAX_LIMIT))

    def cursor(self) -> Cursor:
        high = _notification_id("max_id", self.max_id)
        since = _notification_id("since_id", self.since_id)
        low = _notification_id("min_id", self.min_id)
        if low is not None:
            return Cursor(after=low)
        if since is not None:
            return Cursor(before=high or TOP, after=since)
        return Cursor(before=high)

    def keep(self, notes: list[Notification]) -> list[Notification]:
        """A ``min_id`` page drops what lies at or above ``max_id``."""
        high = _notification_id("max_id", self.max_id)
        if self.min_id and high is not None:
            return [note for note in notes if note.pk < int(high)]
        return notes


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


class NotificationOut(Schema):
    id: str
    type: str
    created_at: str
    group_key: str
    account: schemas.Account
    status: schemas.Status | None = None


class NotificationGroup(Schema):
    group_key: str
    notifications_count: int
    type: str
    most_recent_notification_id: str
    page_min_id: str
    page_max_id: str
    latest_page_notification_at: str
    sample_account_ids: list[str]
    status_id: str | None = None


class GroupedNotifications(Schema):
    accounts: list[schemas.Account]
    statuses: list[schemas.Status]
    notification_groups: list[NotificationGroup]


class Count(Schema):
    count: int


class Empty(Schema):
    pass


def type_of(note: Notification) -> str | None:
    return TYPE_OF_KIND.get(note.kind)


def _window(moment: datetime) -> int:
    """The first hour (since the epoch) of the twelve-hour window holding ``moment``."""
    hours = int(moment.timestamp()) // 3600
    return hours - hours % GROUP_HOURS


def group_key(note: Notification, groupable: Iterable[str] = GROUPABLE) -> str:
    kind = type_of(note)
    if kind not in groupable:
        return f"ungrouped-{note.pk}"
    window = _window(note.created_at)
    if kind == "follow":
        return f"follow-{window}"
    return f"{kind}-{entities.status_id_of_post(note.post_id)}-{window}"


def _shown(notes: Iterable[Notification]) -> list[Notification]:
    """Those with a Mastodon type, and their status when the type has one."""
    return [
        note
        for note in notes
        if type_of(note) is not None and (type_of(note) not in WITH_STATUS or note.post is not None)
    ]


def _statuses(request: HttpRequest, notes: list[Notification]) -> dict[str, dict[str, Any]]:
    """The notifications' posts as statuses, by post id, hydrated as one page."""
    posts = {note.post.pk: note.post for note in notes if note.post is not None}
    entries = [(post.timeline_key, post) for post in posts.values()]
    shown = entities.statuses(request, entries)
    by_status_id = {status["id"]: status for status in shown}
    return {
        post_id: by_status_id[entities.status_id_of_post(post_id)]
        for post_id in posts
        if entities.status_id_of_post(post_id) in by_status_id
    }


def _with_statuses(
    request: HttpRequest, notes: list[Notification]
) -> tuple[list[Notification], dict[str, dict[str, Any]]]:
    notes = _shown(notes)
    statuses = _statuses(request, notes)
    kept = [note for note in notes if note.post is None or note.post.pk in statuses]
    return kept, statuses


def notification(
    note: Notification, statuses: dict[str, dict[str, Any]], link: entities.Links
) -> dict[str, Any]:
    return {
        "id": str(note.pk),
        "type": type_of(note),
        "created_at": entities.timestamp(note.created_at),
        "group_key": group_key(note),
        "account": entities.account(note.actor, link),
        "status": statuses.get(note.post.pk) if note.post is not None else None,
    }


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
    kept = query.keep(page.items)
    _links(request, response, page, kept)
    notes, statuses = _with_statuses(request, kept)
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
    notes, statuses = _with_statuses(request, [_one(request, notification_id)])
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


def grouped(request: HttpRequest, notes: list[Notification], groupable: set[str]) -> dict[str, Any]:
    """Notifications (newest first) as Mastodon's grouped results: each group in the order
    of its newest, with the accounts and statuses the groups name, each once."""
    notes, statuses = _with_statuses(request, notes)
    link = entities.Links(request)
    groups: dict[str, list[Notification]] = {}
    for note in notes:
        groups.setdefault(group_key(note, groupable), []).append(note)
    accounts: dict[int, dict[str, Any]] = {}
    shown_statuses: dict[str, dict[str, Any]] = {}
    answer = []
    for key, members in groups.items():
        newest = members[0]
        sample: list[int] = []
        for member in members:
            if member.actor_id not in sample and len(sample) < SAMPLE_ACCOUNTS:
                sample.append(member.actor_id)
                accounts.setdefault(member.actor_id, entities.account(member.actor, link))
        status = statuses.get(newest.post.pk) if newest.post is not None else None
        if status is not None:
            shown_statuses.setdefault(status["id"], status)
        row_ids = [member.pk for member in members]
        answer.append(
            {
                "group_key": key,
                "notifications_count": len(members),
                "type": type_of(newest),
                "most_recent_notification_id": str(newest.pk),
                "page_min_id": str(min(row_ids)),
                "page_max_id": str(max(row_ids)),
                "latest_page_notification_at": entities.timestamp(newest.created_at),
                "sample_account_ids": [str(actor) for actor in sample],
                "status_id": status["id"] if status is not None else None,
            }
        )
    return {
        "accounts": list(accounts.values()),
        "statuses": list(shown_statuses.values()),
        "notification_groups": answer,
    }


@router.get("/v2/notifications", auth=Token("read:notifications"), response=GroupedNotifications)
def grouped_notifications(
    request: HttpRequest, response: HttpResponse, query: Query[GroupedPage]
) -> dict[str, Any]:
    page = selectors.notifications_page(
        user=request.user, cursor=query.cursor(), limit=query.size, only=query.only()
    )
    kept = query.keep(page.items)
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
    members = _shown(_members_of(request, group_key))
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
