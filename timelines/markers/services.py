"""Setting read positions.

Each write is one statement (an upsert whose update adds one to ``version``),
so two apps writing at once both count and neither's write is lost: there is
no read-then-write for a concurrent update to conflict with, where Mastodon
answers 409.

The notifications marker and the site's unread notifications are one thing
seen twice: the site counts unread by each notification's ``read_at`` (and
the user's counter), so setting the marker also marks the notifications up to
it read (``timelines.notifications.services.mark_read_up_to``), and the unread
count stays the site's alone. The home marker is a position only: the home
feed counts nothing unread.
"""

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from feed_project.refusals import Invalid
from posts import ids
from timelines.markers.models import Marker
from timelines.notifications import selectors as notification_selectors
from timelines.notifications import services as notification_services

Timeline = Marker.Timeline


def _checked(timeline: str, last_read_id: str) -> str:
    """The position, if it is an id of that timeline's; else Invalid."""
    if timeline == Timeline.NOTIFICATIONS:
        if notification_selectors.is_cursor(last_read_id):
            return last_read_id
        raise Invalid("last_read_id is not a notification id")
    try:
        ids.key_of_decimal(last_read_id)
    except ids.InvalidKey:
        raise Invalid("last_read_id is not a status id") from None
    return last_read_id


def set_markers(*, user: User, positions: dict[str, str]) -> dict[str, Marker]:
    """Set ``user``'s read position in each timeline named (``home``, ``notifications``);
    the markers as they now stand."""
    unknown = set(positions) - set(Timeline.values)
    if unknown:
        raise Invalid(f"Unknown timeline: {', '.join(sorted(unknown))}")
    checked = {name: _checked(name, str(value)) for name, value in positions.items()}
    table = Marker._meta.db_table
    written: dict[str, Marker] = {}
    with transaction.atomic():
        for name, last_read_id in checked.items():
            now = timezone.now()
            with connection.cursor() as db:
                db.execute(
                    f"INSERT INTO {table} (user_id, timeline, last_read_id, version, updated_at) "
                    "VALUES (%s, %s, %s, 1, %s) ON CONFLICT (user_id, timeline) DO UPDATE SET "
                    f"last_read_id = EXCLUDED.last_read_id, version = {table}.version + 1, "
                    "updated_at = EXCLUDED.updated_at RETURNING version",
                    [user.pk, name, last_read_id, now],
                )
                (version,) = db.fetchone()
            written[name] = Marker(
                user_id=user.pk,
                timeline=name,
                last_read_id=last_read_id,
                version=version,
                updated_at=now,
            )
            if name == Timeline.NOTIFICATIONS:
                notification_services.mark_read_up_to(user=user, notification_id=int(last_read_id))
    return written
