"""Seed 003's contact degree (联系度): how much two people have had to do with each other.

Each interaction between two people adds its weight to the degree of both of
their rows (``Contact``, one each way, each on its user's shard); a degree
halves every ``HALF_LIFE``, so what counts is recent. Raised by the
notification task of a reply, like, repost or quote (``notify`` calls
``raise_for`` once the notification row goes in, so a retried task or a like,
unlike, like again raises it once), never by a page. Never shown.
"""

from collections.abc import Collection
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from timelines.suggestions.models import Contact

HALF_LIFE = timedelta(days=14)

# What each kind of interaction adds (notification kinds): a reply says more than a like.
WEIGHTS = {"reply": 3.0, "quote": 2.0, "repost": 2.0, "like": 1.0}


def decayed(degree: float, since: datetime, now: datetime) -> float:
    """``degree`` as it was at ``since``, as it is at ``now``."""
    age = max((now - since).total_seconds(), 0.0)
    return degree * 0.5 ** (age / HALF_LIFE.total_seconds())


def raise_for(kind: str, a_id: int, b_id: int, *, now: datetime | None = None) -> None:
    """An interaction of ``kind`` (a notification kind) between two people: raise
    their degree both ways when ``kind`` is one that counts."""
    weight = WEIGHTS.get(kind)
    if weight is not None and a_id != b_id:
        raise_degree(a_id, b_id, weight, now=now)


def raise_degree(a_id: int, b_id: int, weight: float, *, now: datetime | None = None) -> None:
    """Add ``weight`` to the degree of ``a`` with ``b`` and of ``b`` with ``a``."""
    now = now or timezone.now()
    with transaction.atomic():
        # Two rows, one per shard, each locked by its key: two interactions of the
        # same pair at once add up; a first insert raced by another is an
        # IntegrityError, and the task is retried (FeedTask). Locked lower user
        # first, whichever way the interaction went, so that two tasks of one pair
        # never wait on each other's row (a deadlock).
        for user_id, other_id in sorted(((a_id, b_id), (b_id, a_id))):
            row = Contact.objects.select_for_update().filter(user_id=user_id, other_id=other_id)
            found = row.first()
            if found is None:
                Contact.objects.create(
                    user_id=user_id, other_id=other_id, degree=weight, updated_at=now
                )
            else:
                degree = decayed(found.degree, found.updated_at, now) + weight
                row.update(degree=degree, updated_at=now)


def degrees(user_ids: Collection[int], *, now: datetime) -> dict[tuple[int, int], float]:
    """Every degree of these users with anyone, as of ``now``: one range by user."""
    if not user_ids:
        return {}
    rows = Contact.objects.filter(user_id__in=list(user_ids)).values_list(
        "user_id", "other_id", "degree", "updated_at"
    )
    return {(user, other): decayed(degree, since, now) for user, other, degree, since in rows}
