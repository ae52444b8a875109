"""``@username`` in a post's text: one pattern for the links and the notifications."""

import re

from accounts import unique_names
from accounts.models import User

# Usernames are letters, digits and underscores (accounts.models); an "@" right
# after a word character is part of something else (an e-mail address).
MENTION = re.compile(r"(?<![A-Za-z0-9_@])@([A-Za-z0-9_]{1,30})(?![A-Za-z0-9_])")
MAX_MENTIONS = 10


def mentioned_usernames(text: str) -> list[str]:
    """The distinct usernames mentioned in ``text``, lower-cased, first ten, in order."""
    names: list[str] = []
    for match in MENTION.finditer(text):
        name = match.group(1).lower()
        if name not in names:
            names.append(name)
            if len(names) == MAX_MENTIONS:
                break
    return names


def existing_mentions(text: str) -> str:
    """``Post.mentions`` of ``text``: the mentioned usernames of active people, lower-cased,
    space-separated (the mentions shown as links). Two routed look-ups, none without."""
    names = mentioned_usernames(text)
    if not names:
        return ""
    by_name = unique_names.user_ids_named(names)  # routed by name (accounts.unique_names)
    active = set(
        User.objects.filter(pk__in=by_name.values(), is_active=True).values_list("pk", flat=True)
    )
    return " ".join(name for name in names if by_name.get(name) in active)
