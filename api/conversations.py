"""``/api/v1/conversations``: the site's private messages.

The list is ``/messages/``'s (``timelines.conversations.selectors``: a
person's copies of their conversations, newest message first, a message by
someone blocked either way not shown), paged by the newest message's status
id as Mastodon pages it. A conversation's id is its key on the site (its
people's ids, dot-separated): the same for every participant, as the
``/messages/<key>/`` page's. Reading one is the page's ``mark_read``;
deleting one takes it off the person's list (``hide``).
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from api import entities, schemas
from api.auth import Token
from api.paging import PageQuery, link_header
from api.schemas import Entity
from posts import ids
from posts.models import Post
from timelines.conversations import selectors, services
from timelines.conversations.selectors import ConversationItem

router = Router(tags=["conversations"])
AUTHOR = Post._meta.get_field("author")


class ConversationOut(Entity):
    id: str
    unread: bool
    accounts: list[schemas.Account]
    last_status: schemas.Status | None


class Empty(Entity):
    pass


def conversations_of(request: HttpRequest, items: list[ConversationItem]) -> list[dict[str, Any]]:
    """Conversations as Mastodon's, their newest messages hydrated as one page (their
    authors are the people the list loaded, or the reader: no query for them)."""
    for item in items:
        if item.last is not None:
            people = {person.pk: person for person in (request.user, *item.others)}
            if item.last.author_id in people:
                AUTHOR.set_cached_value(item.last, people[item.last.author_id])
    lasts = [(item.last.timeline_key, item.last) for item in items if item.last is not None]
    statuses = {status["id"]: status for status in entities.statuses(request, lasts)}
    link = entities.Links(request)
    return [
        {
            "id": item.conversation.key,
            "unread": item.conversation.unread,
            "accounts": [entities.account(person, link) for person in item.others],
            "last_status": statuses.get(ids.decimal_of_key(item.last.timeline_key))
            if item.last is not None
            else None,
        }
        for item in items
    ]


@router.get("/v1/conversations", auth=Token("read:statuses"), response=list[ConversationOut])
def conversations(
    request: HttpRequest, response: HttpResponse, query: Query[PageQuery]
) -> list[dict[str, Any]]:
    page = selectors.conversations_page(user=request.user, cursor=query.cursor(), limit=query.size)
    items = query.keep(page.items, lambda item: item.conversation.last_key)
    first = ids.decimal_of_key(items[0].conversation.last_key) if items else None
    last = ids.decimal_of_key(items[-1].conversation.last_key) if items else None
    link_header(request, response, first, last, more=page.older is not None)
    return conversations_of(request, items)


@router.delete(
    "/v1/conversations/{conversation_id}", auth=Token("write:conversations"), response=Empty
)
def delete(request: HttpRequest, conversation_id: str) -> dict[str, Any]:
    selectors.conversation_of(user=request.user, key=conversation_id)
    services.hide(user=request.user, key=conversation_id)
    return {}


@router.post(
    "/v1/conversations/{conversation_id}/read",
    auth=Token("write:conversations"),
    response=ConversationOut,
)
def read(request: HttpRequest, conversation_id: str) -> dict[str, Any]:
    selectors.conversation_of(user=request.user, key=conversation_id)
    services.mark_read(user=request.user, key=conversation_id)
    item = selectors.conversation_item(user=request.user, key=conversation_id)
    return conversations_of(request, [item])[0]
