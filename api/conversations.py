"""``/api/v1/conversations``: the site's private messages."""

from ninja import Router

router = Router(tags=["conversations"])
