"""Usernames and e-mail addresses taken: the tables that hold their uniqueness and find
their owner (``UsernameClaim``, ``EmailClaim``).

On Citus ``accounts_user`` is distributed by id: a unique constraint on
``lower(username)`` cannot be kept there, and ``WHERE upper(username) =
upper(%s)`` reads every shard. Each claim table is distributed by its own key
(feed_project.sharding), so taking a name is a primary-key insert on one shard
and finding a person by name is two routed probes: the claim, then the user by
id. Claims are written in the user row's transaction: ``User.save`` calls
``sync``; the services that change ``email`` with ``update()``
(accounts.addresses, accounts.deletion) call ``take_email`` and
``release_email``. Names and addresses are compared lower-cased, as the
constraints on plain PostgreSQL do (usernames are ASCII: accounts.models).
"""

from collections.abc import Iterable

from django.db import IntegrityError
from django.db.models import QuerySet

from accounts.models import EmailClaim, User, UsernameClaim


def _take(model: type[UsernameClaim] | type[EmailClaim], key: str, user_id: int) -> None:
    """Claim ``key`` for ``user_id``; nothing to do if it is theirs already."""
    owner = model.objects.filter(pk=key).values_list("user_id", flat=True).first()
    if owner == user_id:
        return
    if owner is not None:
        raise IntegrityError(f"{model.__name__} {key!r} is taken")
    model.objects.create(pk=key, user_id=user_id)  # a racing insert: IntegrityError


def take_email(*, user_id: int, address: str) -> None:
    if address:
        _take(EmailClaim, address.lower(), user_id)


def release_email(*, user_id: int, address: str) -> None:
    if address:
        EmailClaim.objects.filter(address=address.lower(), user_id=user_id).delete()


def sync(user: User) -> None:
    """After ``user`` is saved: claim its username and e-mail, release the ones it left."""
    old_name, old_email = getattr(user, "_claimed", (None, None))
    name, email = user.__dict__.get("username"), user.__dict__.get("email")
    if name is not None and name.lower() != (old_name or "").lower():
        if old_name:
            UsernameClaim.objects.filter(name=old_name.lower(), user_id=user.pk).delete()
        _take(UsernameClaim, name.lower(), user.pk)
    if email is not None and email.lower() != (old_email or "").lower():
        release_email(user_id=user.pk, address=old_email or "")
        take_email(user_id=user.pk, address=email)
    user._claimed = (name, email)


def claim_bulk(users: Iterable[tuple[int, str, str]]) -> None:
    """Claims of users inserted in bulk (dev tools: ``bulk_create`` skips ``save``):
    ``(id, username, email)`` each; a name or address taken raises IntegrityError."""
    users = list(users)
    UsernameClaim.objects.bulk_create(
        [UsernameClaim(name=name.lower(), user_id=pk) for pk, name, _ in users], batch_size=5000
    )
    EmailClaim.objects.bulk_create(
        [EmailClaim(address=email.lower(), user_id=pk) for pk, _, email in users if email],
        batch_size=5000,
    )


# A name longer than the column is no one's, and is not asked for: Citus casts
# the value to the distribution column's type to find its shard, and a cast
# that would truncate raises (plain PostgreSQL compares it and finds nothing).
_NAME_LENGTH = UsernameClaim._meta.get_field("name").max_length


def _could_be_taken(name: str) -> bool:
    return len(name) <= _NAME_LENGTH


def username_taken(username: str) -> bool:
    name = username.lower()
    return _could_be_taken(name) and UsernameClaim.objects.filter(name=name).exists()


def users_named(username: str) -> QuerySet[User]:
    """The user whose name this is, whatever its case (none or one), as a queryset to
    filter further: the claim is read now, the user row by id when evaluated."""
    name = username.lower()
    if not _could_be_taken(name):
        return User.objects.none()
    user_id = UsernameClaim.objects.filter(name=name).values_list("user_id", flat=True)
    found = user_id.first()
    return User.objects.filter(pk=found) if found is not None else User.objects.none()


def user_ids_named(usernames: Iterable[str]) -> dict[str, int]:
    """Lower-cased name -> user id, for those of ``usernames`` that are taken."""
    names = {name.lower() for name in usernames if _could_be_taken(name.lower())}
    if not names:
        return {}
    return dict(UsernameClaim.objects.filter(name__in=names).values_list("name", "user_id"))


def users_with_email(address: str) -> QuerySet[User]:
    """The account whose ``email`` this is, whatever its case (none or one)."""
    found = (
        EmailClaim.objects.filter(address=address.lower()).values_list("user_id", flat=True).first()
    )
    return User.objects.filter(pk=found) if found is not None else User.objects.none()
