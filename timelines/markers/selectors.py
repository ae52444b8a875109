"""Reading a user's read positions."""

from collections.abc import Collection

from accounts.models import User
from timelines.markers.models import Marker


def markers_of(*, user: User, timelines: Collection[str]) -> dict[str, Marker]:
    """``user``'s markers of these timelines, by timeline (one query; none set: absent)."""
    wanted = [name for name in timelines if name in Marker.Timeline.values]
    if not wanted:
        return {}
    rows = Marker.objects.filter(user_id=user.pk, timeline__in=wanted)
    return {marker.timeline: marker for marker in rows}
