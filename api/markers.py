"""``/api/v1/markers``: read positions of the home feed and the notifications.

Kept by the timelines' markers room (``timelines.markers``), which owns the
rule that matters: setting the notifications marker marks the site's
notifications up to it read, so the page's badge and the API's unread
counts agree. Each write adds one to the marker's ``version`` in one
statement, so concurrent writes from two apps never lose one.
"""

from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from api import entities
from api.auth import Token
from api.schemas import Entity
from timelines.markers import selectors, services
from timelines.markers.models import Marker

router = Router(tags=["markers"])


class MarkerOut(Entity):
    last_read_id: str
    version: int
    updated_at: str


class Position(Schema):
    last_read_id: str | int


class NewMarkers(Schema):
    """JSON ``{"home": {"last_read_id": ...}}``; a form's ``home[last_read_id]`` is read
    apart (``form_positions``), as the body's schema names only the JSON's fields."""

    home: Position | None = None
    notifications: Position | None = None


def form_positions(request: HttpRequest) -> dict[str, str]:
    """A form's ``<timeline>[last_read_id]`` fields, by timeline (others ignored, as the
    JSON's are)."""
    if request.content_type == "application/json":
        return {}
    found = {}
    for key, value in request.POST.items():
        name, bracket, rest = key.partition("[")
        if bracket and rest == "last_read_id]" and name in NewMarkers.model_fields:
            found[name] = value
    return found


class WhichTimelines(Schema):
    timeline: list[str] = Field(default_factory=list, alias="timeline[]")
    timeline_plain: list[str] = Field(default_factory=list, alias="timeline")


def marker(found: Marker) -> dict[str, Any]:
    return {
        "last_read_id": found.last_read_id,
        "version": found.version,
        "updated_at": entities.timestamp(found.updated_at),
    }


@router.get("/v1/markers", auth=Token("read:statuses"), response=dict[str, MarkerOut])
def markers(request: HttpRequest, query: Query[WhichTimelines]) -> dict[str, Any]:
    wanted = [*query.timeline, *query.timeline_plain]
    found = selectors.markers_of(user=request.user, timelines=wanted)
    return {name: marker(row) for name, row in found.items()}


@router.post("/v1/markers", auth=Token("write:statuses"), response=dict[str, MarkerOut])
def set_markers(request: HttpRequest, body: NewMarkers) -> dict[str, Any]:
    positions = {
        name: str(position.last_read_id)
        for name, position in (("home", body.home), ("notifications", body.notifications))
        if position is not None
    }
    positions.update(form_positions(request))
    written = services.set_markers(user=request.user, positions=positions)
    return {name: marker(row) for name, row in written.items()}
