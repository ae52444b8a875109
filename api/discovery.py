"""Trends and suggestions: ``/api/v1/trends/tags``, ``/api/v2/suggestions``."""

from ninja import Router

router = Router(tags=["discovery"])
