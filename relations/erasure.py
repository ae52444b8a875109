"""relations' part of erasing an account (accounts.deletion): the graph around it.

Both follow tables, both ways, with the counters of the people on the other
side; blocks and mutes either way; the user's imports of follows. The rows
on the other people's shards are found through the user's own lists
(Follower(user) names who holds a Followee row of them, and the reverse),
so those statements route by the other people's ids; blocks and mutes of
the user by others have no list of their own and are one statement across
shards, listed in docs/SCALING.md with the other erasure queries.

No ``unfollowed`` signals: the account's posts are erased in the same
transaction and timelines clears every inbox of them (timelines.erasure).
"""

from typing import Any

from django.db.models import F

from accounts.models import User
from relations.models import Block, Followee, Follower, FollowImport, FollowRequest, Mute


def erase_graph(*, user_id: int) -> None:
    followers = list(Follower.objects.filter(user_id=user_id).values_list("follower_id", flat=True))
    followees = list(Followee.objects.filter(user_id=user_id).values_list("followee_id", flat=True))
    if followers:
        Followee.objects.filter(user_id__in=followers, followee_id=user_id).delete()
        User.objects.filter(pk__in=followers).update(following_count=F("following_count") - 1)
    if followees:
        Follower.objects.filter(user_id__in=followees, follower_id=user_id).delete()
        User.objects.filter(pk__in=followees).update(followers_count=F("followers_count") - 1)
    Follower.objects.filter(user_id=user_id).delete()
    Followee.objects.filter(user_id=user_id).delete()
    Block.objects.filter(user_id=user_id).delete()
    Block.objects.filter(blocked_id=user_id).delete()
    Mute.objects.filter(user_id=user_id).delete()
    Mute.objects.filter(muted_id=user_id).delete()
    FollowImport.objects.filter(user_id=user_id).delete()
    FollowRequest.objects.filter(user_id=user_id).delete()
    FollowRequest.objects.filter(requester_id=user_id).delete()


def on_account_erasing(sender: Any, user_id: int, **kwargs: Any) -> None:
    erase_graph(user_id=user_id)
