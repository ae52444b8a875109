"""``/api/v1/instance`` and ``/api/v2/instance``: what a client reads before anything
else, to learn the server's name, version and limits.

The version says Mastodon 4.3.0 "compatible", as other servers (GoToSocial,
Pleroma) do, so clients enable 4.3's features; ``api_versions`` is 4.3's way to
say which API revision this is. The limits are the site's own (post length,
images per post, image size), so a client's compose box counts as the site's
does. Public, as Mastodon's: no token is asked for or looked at.
"""

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Router

from accounts import registration
from feed_project import images
from posts import media
from posts.models import MAX_POST_LENGTH
from posts.post_length import URL_LENGTH

SITE_NAME = "Feed"  # the name templates/base.html shows
VERSION = f"4.3.0 (compatible; {SITE_NAME})"
DESCRIPTION = "A microblog whose home feed is delivered the way Weibo's is."

router = Router(tags=["instance"])


def _configuration() -> dict[str, Any]:
    return {
        "accounts": {"max_featured_tags": 0, "max_pinned_statuses": 0},
        "statuses": {
            "max_characters": MAX_POST_LENGTH,
            "max_media_attachments": media.MAX_IMAGES,
            "characters_reserved_per_url": URL_LENGTH,
        },
        "media_attachments": {
            "supported_mime_types": [kind for kind, _ in images.FORMATS.values()],
            "image_size_limit": images.MAX_BYTES,
            "image_matrix_limit": images.MAX_PIXELS,
            "video_size_limit": 0,
            "video_frame_rate_limit": 0,
            "video_matrix_limit": 0,
        },
        "polls": {
            "max_options": 0,
            "max_characters_per_option": 0,
            "min_expiration": 0,
            "max_expiration": 0,
        },
        "translation": {"enabled": False},
    }


def _common(request: HttpRequest) -> dict[str, Any]:
    return {
        "title": SITE_NAME,
        "version": VERSION,
        "description": DESCRIPTION,
        "languages": ["en"],
        "rules": [],
        "api_versions": {"mastodon": 2},
        "configuration": _configuration(),
    }


def _registrations() -> dict[str, Any]:
    mode = registration.mode()
    return {
        "enabled": mode in ("open", "approval"),
        "approval_required": mode == "approval",
        "message": None,
    }


@router.get("/v2/instance", auth=None)
def instance_v2(request: HttpRequest) -> dict[str, Any]:
    return {
        **_common(request),
        "domain": request.get_host(),
        "source_url": "",
        "usage": {"users": {"active_month": 0}},
        "thumbnail": {"url": ""},  # the site has no banner image yet
        "registrations": _registrations(),
        "contact": {"email": settings.DEFAULT_FROM_EMAIL, "account": None},
    }


@router.get("/v1/instance", auth=None)
def instance_v1(request: HttpRequest) -> dict[str, Any]:
    registrations = _registrations()
    return {
        **_common(request),
        "uri": request.get_host(),
        "short_description": DESCRIPTION,
        "email": settings.DEFAULT_FROM_EMAIL,
        "urls": {},
        "stats": {"user_count": 0, "status_count": 0, "domain_count": 1},
        "thumbnail": None,
        "registrations": registrations["enabled"],
        "approval_required": registrations["approval_required"],
        "invites_enabled": registration.mode() == "invite",
        "contact_account": None,
    }
