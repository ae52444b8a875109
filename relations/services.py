from functools import partial

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from relations.models import Followee, Follower
from relations.signals import followed, unfollowed


class SelfFollowError(ValueError):
    """Nobody follows themselves."""


def _lock_users(*user_ids: int) -> None:
    # Both rows locked in id order: two requests touching the same pair queue
    # up instead of both seeing "not following yet", and cannot deadlock.
    list(User.objects.select_for_update().filter(pk__in=user_ids).order_by("pk").values("pk"))


def follow(*, follower: User, followee: User) -> bool:
    """``follower`` follows ``followee``; False when that was already so."""
    if follower.pk == followee.pk:
        raise SelfFollowError("You cannot follow yourself.")
    with transaction.atomic():
        _lock_users(follower.pk, followee.pk)
        if Followee.objects.filter(user_id=follower.pk, followee_id=followee.pk).exists():
            return False
        now = timezone.now()
        Followee.objects.create(user_id=follower.pk, followee_id=followee.pk, created_at=now)
        Follower.objects.create(user_id=followee.pk, follower_id=follower.pk, created_at=now)
        User.objects.filter(pk=follower.pk).update(following_count=F("following_count") + 1)
        User.objects.filter(pk=followee.pk).update(followers_count=F("followers_count") + 1)
        transaction.on_commit(
            partial(
                followed.send, sender=Followee, follower_id=follower.pk, followee_id=followee.pk
            )
        )
    return True


def unfollow(*, follower: User, followee: User) -> bool:
    """``follower`` stops following ``followee``; False when they did not follow."""
    with transaction.atomic():
        _lock_users(follower.pk, followee.pk)
        deleted, _ = Followee.objects.filter(user_id=follower.pk, followee_id=followee.pk).delete()
        if not deleted:
            return False
        Follower.objects.filter(user_id=followee.pk, follower_id=follower.pk).delete()
        User.objects.filter(pk=follower.pk).update(following_count=F("following_count") - 1)
        User.objects.filter(pk=followee.pk).update(followers_count=F("followers_count") - 1)
        transaction.on_commit(
            partial(
                unfollowed.send, sender=Followee, follower_id=follower.pk, followee_id=followee.pk
            )
        )
    return True
