"""``/api/v1/accounts/:id/follow`` and the other relationship endpoints: follows, blocks,
mutes, follow requests, and the lists of them.
"""

from ninja import Router

router = Router(tags=["relationships"])
