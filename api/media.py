"""``/api/v2/media`` and ``/api/v1/media/:id``: images uploaded before the status that
carries them.
"""

from ninja import Router

router = Router(tags=["media"])
