"""timelines' part of erasing an account (accounts.deletion).

- the home feed's part (``timelines.home.erase``): the user's inbox and cache,
  and the user's posts in other readers' inboxes;
- notifications to the user, by the user, or about the user's posts, with
  each recipient's unread counter;
- their read positions (markers);
- contact degrees and suggestions of the user and about the user;
- the outbox rows the user owns, the fan-out rows of their posts, their
  pull-author row.
"""

from collections import Counter
from typing import Any

from django.db.models import F, Q

from accounts.models import User
from posts import ids
from timelines import home
from timelines.models import (
    Conversation,
    ConversationMessage,
    FanOut,
    Marker,
    PendingTask,
    PullAuthor,
)
from timelines.notifications.models import Notification
from timelines.suggestions.models import Contact, Suggestion


def erase_reader_and_author(*, user_id: int) -> None:
    low, high = ids.post_id_range(user_id)
    home.erase(user_id)

    about = Q(actor_id=user_id) | Q(post_id__gte=low, post_id__lt=high)
    unread = Counter(
        Notification.objects.filter(about, read_at__isnull=True)
        .exclude(recipient_id=user_id)
        .values_list("recipient_id", flat=True)
    )
    for recipient_id, n in unread.items():
        User.objects.filter(pk=recipient_id).update(
            unread_notifications=F("unread_notifications") - n
        )
    Notification.objects.filter(about).delete()
    Notification.objects.filter(recipient_id=user_id).delete()

    # Their own copies of conversations; others' copies keep the keys of messages
    # that no longer exist (the page skips them).
    ConversationMessage.objects.filter(user_id=user_id).delete()
    Conversation.objects.filter(user_id=user_id).delete()
    Marker.objects.filter(user_id=user_id).delete()

    # Who to follow: their degrees and suggestions, and theirs in others' (every shard).
    Contact.objects.filter(Q(user_id=user_id) | Q(other_id=user_id)).delete()
    Suggestion.objects.filter(Q(user_id=user_id) | Q(suggested_id=user_id)).delete()

    PendingTask.objects.filter(owner=user_id).delete()
    FanOut.objects.filter(post_id__gte=low, post_id__lt=high).delete()
    PullAuthor.objects.filter(author_id=user_id).delete()


def on_account_erasing(sender: Any, user_id: int, **kwargs: Any) -> None:
    erase_reader_and_author(user_id=user_id)
