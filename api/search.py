"""``/api/v2/search``: accounts, statuses and hashtags, by the site's search."""

from ninja import Router

router = Router(tags=["search"])
