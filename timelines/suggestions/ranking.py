"""A user's suggestions, computed off the request path into ``Suggestion`` rows.

Score of a candidate C for the user U, over U's friends f (people U follows,
the ``FRIENDS`` U has most to do with) who follow C:

    sum over f of (1 + degree(U, f) + degree(f, C))  +  2 * degree(U, C)

so every friend who follows C counts once, more when U is close to that
friend or that friend close to C, and someone U has already talked with
(a reply to a post they saw reposted) counts on their own. Left out: U, whom
U follows or asked to follow, anyone blocked or muted either way with U,
suspended accounts and accounts being deleted. When that leaves fewer than
``KEPT``, popular accounts fill the rest (most followers, active within
``POPULAR_ACTIVE``, the same people left out): the answer for an empty graph.
"""

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from posts import page_queries
from relations.models import Followee
from relations.visibility import shut_out_among
from timelines.suggestions import contacts
from timelines.suggestions.models import Suggestion

KEPT = 20  # rows a user keeps: the sidebar shows 3, /suggestions/ all
# The friends whose follows are read: their follows are the statement's rows
# (50 friends of 200 follows each is 10,000 rows, a few ms), and past the
# closest 50 a friend's friends say little.
FRIENDS = 50
CANDIDATES = 200  # the best-scored people checked for blocks, mutes and suspension
POPULAR = 50  # popular accounts read once a batch, for everyone in it
POPULAR_ACTIVE = timedelta(days=30)


def popular_accounts(*, now: datetime) -> list[User]:
    """The most followed accounts active lately: one statement over every shard,
    once per batch of the refresh (never a page)."""
    return list(
        User.objects.filter(
            is_active=True,
            deletion_due_at__isnull=True,
            last_active_at__gte=now - POPULAR_ACTIVE,
        ).order_by("-followers_count", "pk")[:POPULAR]
    )


def scores(user_id: int, *, now: datetime) -> Counter[int]:
    """Candidates and their scores (see the module), before anyone is left out."""
    following = dict(
        Followee.objects.filter(user_id=user_id).values_list("followee_id", "created_at")
    )
    own = contacts.degrees([user_id], now=now)
    mine = {other: degree for (_, other), degree in own.items()}
    friends = sorted(following, key=lambda f: (-mine.get(f, 0.0), -following[f].timestamp()))
    friends = friends[:FRIENDS]
    found: Counter[int] = Counter()
    for other, degree in mine.items():
        found[other] += 2 * degree
    if friends:
        theirs = contacts.degrees(friends, now=now)
        pairs = Followee.objects.filter(user_id__in=friends).values_list("user_id", "followee_id")
        for friend, candidate in pairs:
            found[candidate] += 1 + mine.get(friend, 0.0) + theirs.get((friend, candidate), 0.0)
    found.pop(user_id, None)
    for followed in following:
        found.pop(followed, None)
    return found


def rank(user_id: int, *, now: datetime, popular: Sequence[User]) -> list[User]:
    """The people to suggest to ``user_id``, best first, at most ``KEPT``."""
    scored = scores(user_id, now=now)
    best = [candidate for candidate, _ in scored.most_common(CANDIDATES)]
    people = User.objects.filter(
        pk__in=best, is_active=True, deletion_due_at__isnull=True
    ).in_bulk()
    extra = [person for person in popular if person.pk not in people and person.pk != user_id]
    if extra:
        followed = set(
            Followee.objects.filter(
                user_id=user_id, followee_id__in=[p.pk for p in extra]
            ).values_list("followee_id", flat=True)
        )
        extra = [person for person in extra if person.pk not in followed]
    left_out = shut_out_among(user_id, [*people, *(p.pk for p in extra)])
    ranked = sorted(
        (person for person in people.values() if person.pk not in left_out),
        key=lambda p: (-scored[p.pk], -p.followers_count, p.pk),
    )
    ranked += [person for person in extra if person.pk not in left_out]
    return ranked[:KEPT]


def refresh(user_id: int, *, now: datetime | None = None, popular: Sequence[User] | None = None):
    """Compute ``user_id``'s suggestions and replace their rows (one transaction)."""
    now = now or timezone.now()
    if popular is None:
        popular = popular_accounts(now=now)
    people = rank(user_id, now=now, popular=popular)
    rows = [
        Suggestion(
            user_id=user_id,
            suggested_id=person.pk,
            rank=position,
            username=person.username,
            display_name=person.display_name,
            avatar=person.avatar,
            locked=person.locked,
        )
        for position, person in enumerate(people)
    ]
    with transaction.atomic():
        Suggestion.objects.filter(user_id=user_id).delete()
        Suggestion.objects.bulk_create(rows)
    return people


def active_batch(after: int, *, size: int, since: datetime) -> list[int]:
    """The next ``size`` users active since ``since`` with ids above ``after``: one
    statement over every shard (the refresh walks every active user, as the trim
    sweep walks every kept inbox)."""
    return list(
        User.objects.filter(pk__gt=after, is_active=True, last_active_at__gte=since)
        .order_by("pk")
        .values_list("pk", flat=True)[:size]
    )


def suggestions_for(user_id: int, *, limit: int) -> list[Suggestion]:
    """The user's precomputed suggestions, best first: one statement on their shard, in
    plain SQL (every home page's sidebar: the QuerySet would cost more CPU than the query)."""
    sql = (
        f"SELECT {page_queries.columns(Suggestion)} FROM {Suggestion._meta.db_table}"
        " WHERE user_id = %(user)s ORDER BY rank LIMIT %(limit)s"
    )
    return page_queries.models(Suggestion, sql, {"user": user_id, "limit": limit})


def forget(user_id: int, suggested_id: int) -> None:
    """``suggested_id`` is no suggestion for ``user_id`` any more (followed, asked, blocked,
    muted): one row by its key, in the caller's transaction."""
    Suggestion.objects.filter(user_id=user_id, suggested_id=suggested_id).delete()
