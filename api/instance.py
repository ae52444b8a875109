"""``/api/v1/instance`` and ``/api/v2/instance``: what a client reads before anything
else, to learn the server's name, version and limits; and the well-known documents
outside ``/api/`` that other software reads (``wellknown_patterns``): NodeInfo 2.0,
host-meta and WebFinger.

The version says Mastodon 4.3.0 "compatible", as other servers (GoToSocial,
Pleroma) do, so clients enable 4.3's features; ``api_versions`` is 4.3's way to
say which API revision this is. The limits are the site's own (post length,
images per post, image size), so a client's compose box counts as the site's
does. Public, as Mastodon's: no token is asked for or looked at. The contact
account is the first administrator's. NodeInfo's usage is counted in one
query of the users table (their post counts summed) and kept ten minutes in the
cache with the administrator's id; every account is local,
and the site federates with nobody, so ``protocols`` is empty. WebFinger finds
an account as its profile page does (``relations.selectors.profile_person``).
"""

from datetime import timedelta
from typing import Any
from xml.sax.saxutils import quoteattr

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.db.models import Count, Q, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import re_path
from django.utils import timezone
from django.views.decorators.http import require_safe
from ninja import Router

from accounts import registration
from accounts.models import User
from api import entities, schemas
from api.errors import error
from api.schemas import Entity
from feed_project import images
from feed_project.refusals import NotFound
from posts import media
from posts.models import MAX_POST_LENGTH
from posts.post_length import URL_LENGTH
from relations.selectors import profile_person

SITE_NAME = "Feed"  # the name templates/base.html shows
VERSION = f"4.3.0 (compatible; {SITE_NAME})"
DESCRIPTION = "A microblog whose home feed is delivered the way Weibo's is."

SOFTWARE = "feed"  # NodeInfo's software name: lower case letters, digits and dashes
NODEINFO_SCHEMA = "http://nodeinfo.diaspora.software/ns/schema/2.0"
NODEINFO_TYPE = f'application/json; profile="{NODEINFO_SCHEMA}#"'
PROFILE_PAGE = "http://webfinger.net/rel/profile-page"
NO_SUCH_ACCOUNT = "Record not found"
USAGE_KEY = "api:instance:figures"
USAGE_SECONDS = 600

router = Router(tags=["instance"])


class InstanceV2(Entity):
    domain: str
    title: str
    version: str
    source_url: str
    description: str
    usage: dict[str, Any]
    thumbnail: dict[str, Any]
    languages: list[str]
    configuration: dict[str, Any]
    registrations: dict[str, Any]
    api_versions: dict[str, int]
    contact: dict[str, Any]
    rules: list[Any]


class InstanceV1(Entity):
    uri: str
    title: str
    short_description: str
    description: str
    email: str
    version: str
    urls: dict[str, Any]
    stats: dict[str, int]
    thumbnail: str | None
    languages: list[str]
    registrations: bool
    approval_required: bool
    invites_enabled: bool
    configuration: dict[str, Any]
    contact_account: schemas.Account | None
    rules: list[Any]
    api_versions: dict[str, int]


def _site_figures() -> dict[str, int | None]:
    """People, those active in the last month and half-year, their posts, and the first
    administrator's id: two queries of the users table, kept USAGE_SECONDS in the cache
    (every client asks for the instance at start-up; the figures need not be live)."""

    def count() -> dict[str, int | None]:
        now = timezone.now()
        people = User.objects.filter(is_active=True, deletion_due_at__isnull=True)
        counts = people.aggregate(
            total=Count("pk"),
            month=Count("pk", filter=Q(last_active_at__gte=now - timedelta(days=30))),
            halfyear=Count("pk", filter=Q(last_active_at__gte=now - timedelta(days=180))),
            posts=Sum("posts_count"),
        )
        admin = people.filter(is_superuser=True).order_by("pk").values_list("pk", flat=True)
        return {**{name: value or 0 for name, value in counts.items()}, "admin": admin.first()}

    return cache.get_or_set(USAGE_KEY, count, USAGE_SECONDS)


def usage() -> dict[str, int]:
    return {name: value or 0 for name, value in _site_figures().items() if name != "admin"}


def contact(request: HttpRequest) -> dict[str, Any] | None:
    """The first administrator's account, whom the site's people would write to."""
    admin_id = _site_figures()["admin"]
    admin = User.objects.filter(pk=admin_id, is_active=True).first() if admin_id else None
    return entities.account(admin, entities.Links(request)) if admin else None


def streaming_url(request: HttpRequest) -> str:
    """Where the streaming API is, as Mastodon names it: the site's base URL with the
    WebSocket scheme (Mastodon.py turns it back into https:// for its SSE streams)."""
    return f"{'wss' if request.is_secure() else 'ws'}://{request.get_host()}"


def _configuration(request: HttpRequest) -> dict[str, Any]:
    return {
        # Mastodon 4.3's urls: the streaming API's base, no status page.
        "urls": {"streaming": streaming_url(request), "status": None},
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
        "configuration": _configuration(request),
    }


def _registrations() -> dict[str, Any]:
    mode = registration.mode()
    return {
        "enabled": mode in ("open", "approval"),
        "approval_required": mode == "approval",
        "message": None,
    }


@router.get("/v2/instance", auth=None, response=InstanceV2)
def instance_v2(request: HttpRequest) -> dict[str, Any]:
    return {
        **_common(request),
        "domain": request.get_host(),
        "source_url": "",
        "usage": {"users": {"active_month": usage()["month"]}},
        "thumbnail": {"url": ""},  # the site has no banner image yet
        "registrations": _registrations(),
        "contact": {"email": settings.DEFAULT_FROM_EMAIL, "account": contact(request)},
    }


@router.get("/v1/instance", auth=None, response=InstanceV1)
def instance_v1(request: HttpRequest) -> dict[str, Any]:
    registrations = _registrations()
    counts = usage()
    return {
        **_common(request),
        "uri": request.get_host(),
        "short_description": DESCRIPTION,
        "email": settings.DEFAULT_FROM_EMAIL,
        "urls": {"streaming_api": streaming_url(request)},
        "stats": {
            "user_count": counts["total"],
            "status_count": counts["posts"],
            "domain_count": 1,
        },
        "thumbnail": None,
        "registrations": registrations["enabled"],
        "approval_required": registrations["approval_required"],
        "invites_enabled": registration.mode() == "invite",
        "contact_account": contact(request),
    }


@require_safe
def nodeinfo_links(request: HttpRequest) -> JsonResponse:
    """``/.well-known/nodeinfo``: where the NodeInfo document is."""
    href = request.build_absolute_uri("/nodeinfo/2.0")
    return JsonResponse({"links": [{"rel": NODEINFO_SCHEMA, "href": href}]})


@require_safe
def nodeinfo(request: HttpRequest) -> JsonResponse:
    """``/nodeinfo/2.0``: the software, its use and whether anyone may sign up."""
    counts = usage()
    document = {
        "version": "2.0",
        "software": {"name": SOFTWARE, "version": VERSION},
        "protocols": [],
        "services": {"outbound": [], "inbound": []},
        "usage": {
            "users": {
                "total": counts["total"],
                "activeMonth": counts["month"],
                "activeHalfyear": counts["halfyear"],
            },
            "localPosts": counts["posts"],
        },
        "openRegistrations": registration.mode() == "open",
        "metadata": {"nodeName": SITE_NAME},
    }
    return JsonResponse(document, content_type=NODEINFO_TYPE)


@require_safe
def host_meta(request: HttpRequest) -> HttpResponse:
    """``/.well-known/host-meta``: the XRD that points at WebFinger."""
    template = request.build_absolute_uri("/.well-known/webfinger") + "?resource={uri}"
    xrd = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n'
        f'  <Link rel="lrdd" template={quoteattr(template)}/>\n'
        "</XRD>\n"
    )
    return HttpResponse(xrd, content_type="application/xrd+xml; charset=utf-8")


def _username_of(resource: str, host: str) -> str | None:
    """The username a WebFinger resource names on this host (``acct:name@host`` or the
    profile's URL), or None."""
    if resource.startswith("acct:"):
        name, _, domain = resource.removeprefix("acct:").removeprefix("@").partition("@")
        return name if name and domain.lower() == host.lower() else None
    for scheme in ("https://", "http://"):
        prefix = f"{scheme}{host}/@"
        if resource.startswith(prefix):
            return resource.removeprefix(prefix).rstrip("/") or None
    return None


@require_safe
def webfinger(request: HttpRequest) -> HttpResponse:
    """``/.well-known/webfinger?resource=acct:name@host``: the account's JRD; else 404."""
    host = request.get_host()
    name = _username_of(request.GET.get("resource", ""), host)
    if name is None:
        return error(NO_SUCH_ACCOUNT, 404)
    try:
        person = profile_person(username=name, viewer=AnonymousUser())
    except NotFound:
        return error(NO_SUCH_ACCOUNT, 404)
    profile = entities.Links(request).profile(person.username)
    return JsonResponse(
        {
            "subject": f"acct:{person.username}@{host}",
            "aliases": [profile],
            "links": [{"rel": PROFILE_PAGE, "type": "text/html", "href": profile}],
        },
        content_type="application/jrd+json",
    )


wellknown_patterns = [
    re_path(r"^\.well-known/nodeinfo/?$", nodeinfo_links, name="nodeinfo-links"),
    re_path(r"^nodeinfo/2\.0/?$", nodeinfo, name="nodeinfo"),
    re_path(r"^\.well-known/host-meta/?$", host_meta, name="host-meta"),
    re_path(r"^\.well-known/webfinger/?$", webfinger, name="webfinger"),
]
