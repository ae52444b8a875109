"""Mastodon's Notification and its groups (Mastodon 4.3's grouped notifications), built
from the notifications page's rows (``timelines.notifications.selectors``).

The site's kinds map onto Mastodon's types (``TYPE_OF_KIND``): a reply is a
mention, as on Mastodon; "your follow request was accepted" has no Mastodon
type and is left out. A notification whose type has a status is left out
when its post is gone for the reader (Mastodon's have their status or are not
shown).

Grouping is Mastodon's: favourites and reblogs of one status and follows,
each within a twelve-hour window, are a group; every other notification is a
group of its own (``ungrouped-<id>``). A group's key is computed from the row
(type, status, window), so it needs no state, and a page groups the
notifications it holds, as Mastodon's pages do. A page's statuses are
hydrated at once (``api.entities.statuses``); the actors came with the rows.
"""

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.http import HttpRequest

from api import entities, schemas
from api.schemas import Entity
from timelines.notifications.models import Notification

Kind = Notification.Kind

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


class NotificationOut(Entity):
    id: str
    type: str
    created_at: str
    group_key: str
    account: schemas.Account
    status: schemas.Status | None = None


class NotificationGroup(Entity):
    group_key: str
    notifications_count: int
    type: str
    most_recent_notification_id: str
    page_min_id: str
    page_max_id: str
    latest_page_notification_at: str
    sample_account_ids: list[str]
    status_id: str | None = None


class GroupedNotifications(Entity):
    accounts: list[schemas.Account]
    statuses: list[schemas.Status]
    notification_groups: list[NotificationGroup]


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


def shown(notes: Iterable[Notification]) -> list[Notification]:
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


def with_statuses(
    request: HttpRequest, notes: list[Notification]
) -> tuple[list[Notification], dict[str, dict[str, Any]]]:
    notes = shown(notes)
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


def grouped(request: HttpRequest, notes: list[Notification], groupable: set[str]) -> dict[str, Any]:
    """Notifications (newest first) as Mastodon's grouped results: each group in the order
    of its newest, with the accounts and statuses the groups name, each once."""
    notes, statuses = with_statuses(request, notes)
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
