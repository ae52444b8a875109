"""Listeners: a follow, a follow request, a block or a mute takes the person out of the
suggestions at once (one row by its key, in the change's transaction); a user here for
the first time, or back after a long absence, gets their suggestions ranked."""

from typing import Any

from accounts.signals import last_active_refreshed
from relations.signals import blocked, follow_requested, followed, muted
from timelines import home
from timelines.outbox import enqueue
from timelines.suggestions import ranking, tasks


def drop_followed(sender: Any, follower_id: int, followee_id: int, **kwargs: Any) -> None:
    ranking.forget(follower_id, followee_id)


def drop_requested(sender: Any, user_id: int, requester_id: int, **kwargs: Any) -> None:
    ranking.forget(requester_id, user_id)


def drop_blocked(sender: Any, user_id: int, target_id: int, **kwargs: Any) -> None:
    ranking.forget(user_id, target_id)
    ranking.forget(target_id, user_id)


def drop_muted(sender: Any, user_id: int, target_id: int, **kwargs: Any) -> None:
    ranking.forget(user_id, target_id)


def rank_returning(sender: Any, user_id: int, previous: Any, **kwargs: Any) -> None:
    """Sent once the refresh of last-active commits: no rows yet, or stale ones."""
    if home.away(previous):
        enqueue(tasks.suggest_for, user_id)


def connect() -> None:
    """Connected from timelines.signals.connect(), each with a dispatch_uid."""
    followed.connect(drop_followed, dispatch_uid="timelines.suggestions.followed")
    follow_requested.connect(drop_requested, dispatch_uid="timelines.suggestions.requested")
    blocked.connect(drop_blocked, dispatch_uid="timelines.suggestions.blocked")
    muted.connect(drop_muted, dispatch_uid="timelines.suggestions.muted")
    last_active_refreshed.connect(rank_returning, dispatch_uid="timelines.suggestions.returning")
