"""Reading private messages: a person's conversations, and one conversation's messages."""

import re
from dataclasses import dataclass

from accounts.models import User
from feed_project.pagination import Cursor, Page, keyset_page
from feed_project.refusals import NotFound
from posts import ids
from posts.models import Post
from relations.visibility import blocked_among
from timelines.conversations.models import Conversation, ConversationMessage

_KEY = re.compile(r"\A[0-9]{1,19}(\.[0-9]{1,19}){1,11}\Z")


def is_key(value: str) -> bool:
    """A conversation's key: two to twelve user ids, dot-separated."""
    return bool(_KEY.match(value))


@dataclass
class ConversationItem:
    """A conversation as the list shows it: the other people, the newest message."""

    conversation: Conversation
    others: list[User]
    last: Post | None  # None: deleted, hidden, or by someone blocked either way


def conversations_page(*, user: User, cursor: Cursor, limit: int = 20) -> Page:
    """``user``'s conversations, newest message first, keyset on its timeline key: three
    queries (the page, the people, the newest messages), whatever the page holds."""
    rows = Conversation.objects.filter(user_id=user.pk)
    page = keyset_page(rows, field="last_key", cursor=cursor, limit=limit)
    page.items = _items(user, page.items)
    return page


def _items(user: User, conversations: list[Conversation]) -> list[ConversationItem]:
    """The conversations with their people and newest messages: two queries at most."""
    people_ids = {pk for c in conversations for pk in c.participant_ids if pk != user.pk}
    people = User.objects.in_bulk(people_ids)
    last_ids = [ids.timeline_key_to_post_id(c.last_key) for c in conversations]
    posts = Post.objects.with_ids(last_ids).visible().in_bulk() if last_ids else {}
    blocked = blocked_among(user.pk, people_ids) if people_ids else set()
    items = []
    for conversation in conversations:
        last = posts.get(ids.timeline_key_to_post_id(conversation.last_key))
        if last is not None and last.author_id in blocked:
            last = None
        others = [people[pk] for pk in conversation.participant_ids if pk in people]
        items.append(ConversationItem(conversation, others, last))
    return items


def conversation_item(*, user: User, key: str) -> ConversationItem:
    """One of ``user``'s conversations as the list shows it; NotFound as ``conversation_of``."""
    return _items(user, [conversation_of(user=user, key=key)])[0]


def conversation_of(*, user: User, key: str) -> Conversation:
    """``user``'s copy of the conversation ``key``; NotFound when it is not theirs (only
    the people in a conversation have a copy), there is none, or the key is malformed."""
    found = Conversation.objects.filter(user_id=user.pk, key=key).first() if is_key(key) else None
    if found is None:
        raise NotFound("No such conversation.")
    return found


def messages_page(*, user: User, conversation: Conversation, cursor: Cursor, limit: int = 20):
    """A page of a conversation's messages, newest page first, each page oldest to newest
    (as a chat reads); messages deleted, hidden or by someone blocked either way left out."""
    rows = ConversationMessage.objects.filter(user_id=user.pk, key=conversation.key)
    page = keyset_page(rows, field="timeline_key", cursor=cursor, limit=limit)
    post_ids = [ids.timeline_key_to_post_id(row.timeline_key) for row in page.items]
    posts = (
        Post.objects.with_ids(post_ids).visible().select_related("author").in_bulk()
        if post_ids
        else {}
    )
    authors = {post.author_id for post in posts.values()} - {user.pk}
    blocked = blocked_among(user.pk, authors) if authors else set()
    shown = [
        posts[post_id]
        for post_id in post_ids
        if post_id in posts and posts[post_id].author_id not in blocked
    ]
    shown.sort(key=lambda post: post.timeline_key)
    return Page(items=shown, older=page.older, newer=page.newer)
