"""relations' part of a data export (accounts.archive): whom the person follows, who
follows them, whom they block and mute, each by username with the time.

``following.csv`` is also the format ``relations.follow_import`` reads back.
Each list is read in keyset batches by the other person's id (the table's
primary key, on the owner's shard), their usernames by primary key.
"""

from collections.abc import Callable, Iterator

from accounts import archive
from accounts.models import User
from relations.models import Block, Followee, Follower, Mute

# Rows read per round trip: one page of the list and one look-up of as many users.
BATCH = 1000


def _list(model: type, other: str, stamp: str) -> Callable[[int], Iterator[archive.Row]]:
    def rows(user_id: int) -> Iterator[archive.Row]:
        last = 0
        while True:
            batch = list(
                model.objects.filter(user_id=user_id, **{f"{other}_id__gt": last})
                .order_by(f"{other}_id")
                .values_list(f"{other}_id", "created_at")[:BATCH]
            )
            if not batch:
                return
            names = dict(
                User.objects.filter(pk__in=[pk for pk, _ in batch]).values_list("pk", "username")
            )
            for pk, created_at in batch:
                if pk in names:
                    yield {"username": names[pk], stamp: created_at}
            last = batch[-1][0]

    return rows


def _section(name: str, model: type, other: str, stamp: str) -> archive.Section:
    return archive.Section(
        name=name,
        columns=("username", stamp),
        rows=_list(model, other, stamp),
        count=lambda user_id: model.objects.filter(user_id=user_id).count(),
    )


SECTIONS = [
    _section("following", Followee, "followee", "followed_at"),
    _section("followers", Follower, "follower", "followed_at"),
    _section("blocks", Block, "blocked", "blocked_at"),
    _section("mutes", Mute, "muted", "muted_at"),
]
