from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, Value

from accounts import unique_names
from accounts.models import User
from feed_project.pagination import Cursor, Page, make_page
from feed_project.refusals import NotFound
from relations import visibility
from relations.models import Block, Followee, Follower, FollowRequest, Mute


@dataclass
class Relation:
    """One person in a followers or following list, marked relative to the viewer."""

    user: User
    since: datetime
    cursor: str
    follows_viewer: bool = False
    followed_by_viewer: bool = False

    @property
    def is_friend(self) -> bool:
        """Friends follow each other (seed 003)."""
        return self.follows_viewer and self.followed_by_viewer


def is_following(*, follower_id: int, followee_id: int) -> bool:
    return Followee.objects.filter(user_id=follower_id, followee_id=followee_id).exists()


def followee_ids(user_id: int) -> list[int]:
    """Whom ``user_id`` follows: one range of ``Followee``, the shard key first."""
    return list(Followee.objects.filter(user_id=user_id).values_list("followee_id", flat=True))


def _encode(moment: datetime, user_id: int) -> str:
    micros = int(moment.timestamp() * 1_000_000)
    return f"{micros}_{user_id}"


def _decode(cursor: str) -> tuple[datetime, int]:
    micros, user_id = cursor.split("_")
    return datetime.fromtimestamp(int(micros) / 1_000_000, tz=UTC), int(user_id)


def is_relation_cursor(value: str) -> bool:
    """A follow list's cursor: when the follow happened (microseconds) and whom, ``T_ID``."""
    try:
        _decode(value)
    except (ValueError, OverflowError, OSError):
        return False
    return value.isascii()


def _relation_page(
    table: type[Follower] | type[Followee] | type[FollowRequest] | type[Block] | type[Mute],
    other: str,
    *,
    user_id: int,
    viewer: User | None,
    cursor: Cursor,
    limit: int,
) -> Page[Relation]:
    rows = table.objects.filter(user_id=user_id)
    other_id = f"{other}_id"
    if viewer is not None and viewer.is_authenticated:
        rows = rows.exclude(visibility.blocked_either_way(viewer.pk, other_id))
    if cursor.after is not None:
        moment, pk = _decode(cursor.after)
        rows = rows.filter(
            Q(created_at__gt=moment) | Q(created_at=moment, **{f"{other_id}__gt": pk})
        )
    if cursor.before is not None:
        moment, pk = _decode(cursor.before)
        rows = rows.filter(
            Q(created_at__lt=moment) | Q(created_at=moment, **{f"{other_id}__lt": pk})
        )
    if cursor.newer_pages:
        rows = rows.order_by("created_at", other_id)
    else:
        rows = rows.order_by("-created_at", f"-{other_id}")
    rows = list(rows[: limit + 1])
    # The people listed live on their own shards: read after the page, by id.
    people = User.objects.in_bulk({getattr(row, other_id) for row in rows})
    relations = [
        Relation(
            user=people[getattr(row, other_id)],
            since=row.created_at,
            cursor=_encode(row.created_at, getattr(row, other_id)),
        )
        for row in rows
    ]
    page = make_page(relations, cursor=cursor, limit=limit, key=lambda r: r.cursor)
    _mark_for_viewer(page.items, viewer)
    return page


def _mark_for_viewer(relations: list[Relation], viewer: User | None) -> None:
    """Two queries whatever the page size: who of these follows the viewer, and back."""
    if viewer is None or not viewer.is_authenticated or not relations:
        return
    listed = [r.user.pk for r in relations]
    follow_viewer = set(
        Follower.objects.filter(user_id=viewer.pk, follower_id__in=listed).values_list(
            "follower_id", flat=True
        )
    )
    followed = set(
        Followee.objects.filter(user_id=viewer.pk, followee_id__in=listed).values_list(
            "followee_id", flat=True
        )
    )
    for relation in relations:
        relation.follows_viewer = relation.user.pk in follow_viewer
        relation.followed_by_viewer = relation.user.pk in followed


def followers_page(
    *, user: User, viewer: User | None, cursor: Cursor, limit: int = 20
) -> Page[Relation]:
    """People who follow ``user``, newest follow first (keyset on ``Follower``)."""
    return _relation_page(
        Follower, "follower", user_id=user.pk, viewer=viewer, cursor=cursor, limit=limit
    )


def following_page(
    *, user: User, viewer: User | None, cursor: Cursor, limit: int = 20
) -> Page[Relation]:
    """People ``user`` follows, newest follow first (keyset on ``Followee``)."""
    return _relation_page(
        Followee, "followee", user_id=user.pk, viewer=viewer, cursor=cursor, limit=limit
    )


def follow_requests_page(*, user: User, cursor: Cursor, limit: int = 20) -> Page[Relation]:
    """People asking to follow ``user``, newest request first (keyset on ``FollowRequest``)."""
    return _relation_page(
        FollowRequest, "requester", user_id=user.pk, viewer=user, cursor=cursor, limit=limit
    )


def blocks_page(*, user: User, cursor: Cursor, limit: int = 20) -> Page[Relation]:
    """People ``user`` blocks, newest block first (keyset on ``Block``)."""
    return _relation_page(
        Block, "blocked", user_id=user.pk, viewer=None, cursor=cursor, limit=limit
    )


def mutes_page(*, user: User, cursor: Cursor, limit: int = 20) -> Page[Relation]:
    """People ``user`` mutes, newest mute first (keyset on ``Mute``)."""
    return _relation_page(Mute, "muted", user_id=user.pk, viewer=None, cursor=cursor, limit=limit)


def pending_requests_count(*, user_id: int) -> int:
    """How many follow requests wait for ``user_id``: a count of one range of their rows."""
    return FollowRequest.objects.filter(user_id=user_id).count()


RELATIONSHIPS = (
    "following",
    "showing_reblogs",
    "notifying",
    "followed_by",
    "blocking",
    "blocked_by",
    "muting",
    "requested",
    "requested_by",
)


def relationships(viewer_id: int, user_ids: list[int]) -> dict[int, dict[str, bool]]:
    """Where the viewer stands with each of ``user_ids`` (``RELATIONSHIPS``, each True or
    False): one statement whatever their number, each leg a range of the viewer's rows
    or a probe of the others' by their key."""
    if not user_ids:
        return {}
    follows = Followee.objects.filter(user_id=viewer_id, followee_id__in=user_ids)
    legs = [
        follows.values_list(Value("following"), "followee_id"),
        follows.filter(hide_reposts=False).values_list(Value("showing_reblogs"), "followee_id"),
        follows.filter(notify_posts=True).values_list(Value("notifying"), "followee_id"),
        Follower.objects.filter(user_id=viewer_id, follower_id__in=user_ids).values_list(
            Value("followed_by"), "follower_id"
        ),
        Block.objects.filter(user_id=viewer_id, blocked_id__in=user_ids).values_list(
            Value("blocking"), "blocked_id"
        ),
        Block.objects.filter(user_id__in=user_ids, blocked_id=viewer_id).values_list(
            Value("blocked_by"), "user_id"
        ),
        Mute.objects.filter(user_id=viewer_id, muted_id__in=user_ids).values_list(
            Value("muting"), "muted_id"
        ),
        FollowRequest.objects.filter(user_id__in=user_ids, requester_id=viewer_id).values_list(
            Value("requested"), "user_id"
        ),
        FollowRequest.objects.filter(user_id=viewer_id, requester_id__in=user_ids).values_list(
            Value("requested_by"), "requester_id"
        ),
    ]
    first, *rest = legs
    found = set(first.union(*rest, all=True))
    return {
        user_id: {name: (name, user_id) in found for name in RELATIONSHIPS} for user_id in user_ids
    }


NO_SUCH_PERSON = "No such person."


def person_named(username: str) -> User:
    """The account of this username, whatever its case (/@Alice/ is alice): the person a
    follow, block, mute or request answer is about; NotFound when no one has the name."""
    person = unique_names.users_named(username).first()
    if person is None:
        raise NotFound(NO_SUCH_PERSON)
    return person


def profile_person(*, username: str, viewer: User | AnonymousUser) -> User:
    """The person of a profile page, with where the viewer stands; NotFound when no one
    has the name or their account is being deleted.

    Usernames are unique case-insensitively (/@Alice/ is alice). For a
    signed-in viewer the row carries ``viewer_follows``, ``viewer_blocks``,
    ``blocks_viewer`` and ``viewer_mutes`` (``visibility.where_viewer_stands``:
    one more query, each user's rows read on their own shard).
    """
    # An account being deleted (or erased) is gone for everyone (accounts.deletion).
    person = unique_names.users_named(username).filter(deletion_due_at__isnull=True).first()
    if person is None:
        raise NotFound(NO_SUCH_PERSON)
    if viewer.is_authenticated:
        for name, value in visibility.where_viewer_stands(viewer.pk, person.pk).items():
            setattr(person, name, value)
    return person
