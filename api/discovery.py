"""Trends and suggestions: ``/api/v1/trends/tags``, ``/api/v2/suggestions``."""

from ninja import Router

router = Router(tags=["discovery"])


# --- Suggestions: who to follow ------------------------------------------------------
# The site's "who to follow" (``timelines.suggestions``): each reader's suggestions are
# ranked by a task into rows of their own, read here as the sidebar and /suggestions/
# read them. Dismissing one drops its row (``ranking.forget``), as following, blocking
# or muting the person does; the next ranking may suggest them again.

from typing import Any  # noqa: E402

from django.http import HttpRequest  # noqa: E402
from ninja import Schema  # noqa: E402

from accounts.models import User  # noqa: E402
from api import entities, schemas  # noqa: E402
from api.auth import Token  # noqa: E402
from timelines.suggestions.ranking import KEPT, forget, suggestions_for  # noqa: E402

SUGGESTION_LIMIT = 40
SUGGESTION_MAX = 80


class FollowSuggestion(Schema):
    source: str
    sources: list[str]
    account: schemas.Account


@router.get("/v2/suggestions", auth=Token("read:accounts"), response=list[FollowSuggestion])
def suggestions(request: HttpRequest, limit: int = SUGGESTION_LIMIT) -> list[dict[str, Any]]:
    """The reader's suggestions, best first: friends of friends, then popular accounts
    (the ranking does not say which is which, so each is "friends_of_friends")."""
    rows = suggestions_for(request.user.pk, limit=max(1, min(limit, SUGGESTION_MAX, KEPT)))
    # The rows copy only a name and a picture; an Account needs the person's counts.
    wanted = [row.suggested_id for row in rows]
    # Someone whose account is being deleted since the ranking is gone, as their profile is.
    people = User.objects.filter(deletion_due_at__isnull=True).in_bulk(wanted)
    link = entities.Links(request)
    return [
        {
            "source": "past_interactions",
            "sources": ["friends_of_friends"],
            "account": entities.account(people[row.suggested_id], link),
        }
        for row in rows
        if row.suggested_id in people
    ]


@router.delete(
    "/v1/suggestions/{account_id}", auth=Token("write:accounts"), response=dict[str, Any]
)
def dismiss_suggestion(request: HttpRequest, account_id: str) -> dict[str, Any]:
    """Mastodon answers an empty object, whether or not the person was suggested."""
    if account_id.isascii() and account_id.isdigit() and len(account_id) <= 18:
        forget(request.user.pk, int(account_id))
    return {}
