"""``/api/v1/notifications`` and ``/api/v2/notifications``: the site's notifications."""

from ninja import Router

router = Router(tags=["notifications"])
