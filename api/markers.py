"""``/api/v1/markers``: read positions of the home feed and the notifications."""

from ninja import Router

router = Router(tags=["markers"])
