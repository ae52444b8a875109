from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from feed_project.refusals import Forbidden, Invalid
from relations.models import Block, Followee, Follower, FollowRequest, Mute
from relations.signals import (
    blocked,
    follow_accepted,
    follow_requested,
    followed,
    muted,
    unfollowed,
    unmuted,
)
from relations.visibility import is_blocked_either_way


class SelfRelationError(Invalid, ValueError):
    """Nobody follows, blocks or mutes themselves: each is about someone else."""


class SelfFollowError(SelfRelationError):
    """Nobody follows themselves."""


class BlockedError(Forbidden, ValueError):
    """One of the two blocks the other: no follow either way."""


def _lock_users(*user_ids: int) -> dict[int, bool]:
    # Both rows locked in id order: two requests touching the same pair queue
    # up instead of both seeing "not following yet", and cannot deadlock.
    # One statement per row: each routes to its user's shard, and Citus runs
    # no FOR UPDATE across shards. NO KEY UPDATE, as the counter UPDATEs take
    # anyway: a plain FOR UPDATE also blocks other transactions' foreign-key
    # checks against these users (a notification naming the follower, checked
    # at COMMIT), and a transaction that holds the followee's row for its
    # counter while it waits on that check deadlocks with this one (seen in
    # `manage.py soak`).
    # Returns whether each account is locked, read under the lock.
    locked = {}
    for user_id in sorted(set(user_ids)):
        row = User.objects.select_for_update(no_key=True).filter(pk=user_id)
        locked[user_id] = bool(row.values_list("locked", flat=True).first())
    return locked


def follow(*, follower: User, followee: User) -> bool:
    """``follower`` follows ``followee``; False when that was already so.

    A locked ``followee`` approves followers: a follow request is recorded
    instead (``is_requested``; ``follow_requested`` sent once) and False returned.
    """
    if follower.pk == followee.pk:
        raise SelfFollowError("You cannot follow yourself.")
    with transaction.atomic():
        locked = _lock_users(follower.pk, followee.pk)
        if is_blocked_either_way(follower.pk, followee.pk):
            raise BlockedError("You cannot follow this account.")
        if Followee.objects.filter(user_id=follower.pk, followee_id=followee.pk).exists():
            return False
        if locked[followee.pk]:
            _, created = FollowRequest.objects.get_or_create(
                user_id=followee.pk,
                requester_id=follower.pk,
                defaults={"created_at": timezone.now()},
            )
            if created:
                follow_requested.send(
                    sender=FollowRequest, user_id=followee.pk, requester_id=follower.pk
                )
            return False
        _follow_locked(follower.pk, followee.pk)
    return True


def _follow_locked(follower_id: int, followee_id: int) -> None:
    now = timezone.now()
    Followee.objects.create(user_id=follower_id, followee_id=followee_id, created_at=now)
    Follower.objects.create(user_id=followee_id, follower_id=follower_id, created_at=now)
    User.objects.filter(pk=follower_id).update(following_count=F("following_count") + 1)
    User.objects.filter(pk=followee_id).update(followers_count=F("followers_count") + 1)
    followed.send(sender=Followee, follower_id=follower_id, followee_id=followee_id)


def is_requested(*, requester_id: int, user_id: int) -> bool:
    """Whether ``requester_id`` has a pending request to follow ``user_id``."""
    return FollowRequest.objects.filter(user_id=user_id, requester_id=requester_id).exists()


def accept_request(*, user: User, requester: User) -> bool:
    """``user`` accepts ``requester``'s request: a follow like any other (backfilled,
    notified as a follow), and ``requester`` told so; False when there was none."""
    with transaction.atomic():
        _lock_users(user.pk, requester.pk)
        deleted, _ = FollowRequest.objects.filter(
            user_id=user.pk, requester_id=requester.pk
        ).delete()
        if not deleted or is_blocked_either_way(user.pk, requester.pk):
            return False
        if not Followee.objects.filter(user_id=requester.pk, followee_id=user.pk).exists():
            _follow_locked(requester.pk, user.pk)
        follow_accepted.send(sender=FollowRequest, user_id=user.pk, requester_id=requester.pk)
    return True


def on_account_unlocked(sender: object, user_id: int, **kwargs: object) -> None:
    """Unlocking accepts every pending follow request (accounts.signals.account_unlocked)."""
    accept_every_request(user_id=user_id)


def reject_request(*, user: User, requester: User) -> bool:
    """``user`` turns down ``requester``'s request; False when there was none."""
    deleted, _ = FollowRequest.objects.filter(user_id=user.pk, requester_id=requester.pk).delete()
    return bool(deleted)


def accept_every_request(*, user_id: int) -> int:
    """Accept every pending request of ``user_id`` (an unlocked account): how many."""
    requesters = FollowRequest.objects.filter(user_id=user_id).values_list(
        "requester_id", flat=True
    )
    user = User(pk=user_id)
    return sum(accept_request(user=user, requester=User(pk=pk)) for pk in list(requesters))


def _unfollow_locked(follower_id: int, followee_id: int) -> bool:
    deleted, _ = Followee.objects.filter(user_id=follower_id, followee_id=followee_id).delete()
    if not deleted:
        return False
    Follower.objects.filter(user_id=followee_id, follower_id=follower_id).delete()
    User.objects.filter(pk=follower_id).update(following_count=F("following_count") - 1)
    User.objects.filter(pk=followee_id).update(followers_count=F("followers_count") - 1)
    unfollowed.send(sender=Followee, follower_id=follower_id, followee_id=followee_id)
    return True


def unfollow(*, follower: User, followee: User) -> bool:
    """``follower`` stops following ``followee`` (or withdraws a pending request);
    False when they did not follow."""
    with transaction.atomic():
        _lock_users(follower.pk, followee.pk)
        FollowRequest.objects.filter(user_id=followee.pk, requester_id=follower.pk).delete()
        return _unfollow_locked(follower.pk, followee.pk)


def set_follow_options(
    *, follower: User, followee: User, hide_reposts: bool, notify_posts: bool
) -> bool:
    """The options of ``follower``'s follow of ``followee``: leave their plain reposts out of
    the feed (read at once: relations.visibility), be notified of their posts (mirrored
    on the Follower row, read when they post). False when there is no such follow."""
    with transaction.atomic():
        changed = Followee.objects.filter(user_id=follower.pk, followee_id=followee.pk).update(
            hide_reposts=hide_reposts, notify_posts=notify_posts
        )
        Follower.objects.filter(user_id=followee.pk, follower_id=follower.pk).update(
            notify_posts=notify_posts
        )
    return bool(changed)


def block(*, user: User, target: User) -> bool:
    """``user`` blocks ``target``: follows both ways end; False when already blocked."""
    if user.pk == target.pk:
        raise SelfRelationError("You cannot block yourself.")
    with transaction.atomic():
        _lock_users(user.pk, target.pk)
        if Block.objects.filter(user_id=user.pk, blocked_id=target.pk).exists():
            return False
        Block.objects.create(user_id=user.pk, blocked_id=target.pk, created_at=timezone.now())
        _unfollow_locked(user.pk, target.pk)
        _unfollow_locked(target.pk, user.pk)
        FollowRequest.objects.filter(user_id=user.pk, requester_id=target.pk).delete()
        FollowRequest.objects.filter(user_id=target.pk, requester_id=user.pk).delete()
        blocked.send(sender=Block, user_id=user.pk, target_id=target.pk)
    return True


def unblock(*, user: User, target: User) -> bool:
    deleted, _ = Block.objects.filter(user_id=user.pk, blocked_id=target.pk).delete()
    return bool(deleted)


def mute(*, user: User, target: User) -> bool:
    """``user`` mutes ``target``: their posts and reposts leave ``user``'s feed."""
    if user.pk == target.pk:
        raise SelfRelationError("You cannot mute yourself.")
    with transaction.atomic():
        _, created = Mute.objects.get_or_create(
            user_id=user.pk, muted_id=target.pk, defaults={"created_at": timezone.now()}
        )
        if created:
            muted.send(sender=Mute, user_id=user.pk, target_id=target.pk)
    return created


def unmute(*, user: User, target: User) -> bool:
    with transaction.atomic():
        deleted, _ = Mute.objects.filter(user_id=user.pk, muted_id=target.pk).delete()
        if deleted:
            unmuted.send(sender=Mute, user_id=user.pk, target_id=target.pk)
    return bool(deleted)
