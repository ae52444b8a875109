"""The API's routes: ``/api/`` (django-ninja, with its OpenAPI document at
``/api/openapi.json``), ``/oauth/`` and ``/.well-known/oauth-authorization-server``.

Mastodon's clients call paths with and without a trailing slash: the API's
answer both (``api.middleware.ApiPaths``), as do the OAuth endpoints here.
"""

import json
from typing import Any

from django.http import HttpRequest
from django.urls import include, path, re_path
from ninja import NinjaAPI
from ninja.parser import Parser

from api import (
    accounts,
    apps_endpoint,
    conversations,
    discovery,
    errors,
    instance,
    markers,
    media,
    notifications,
    oauth,
    personal,
    relationships,
    search,
    statuses,
    streaming,
    timelines,
)


class FormOrJson(Parser):
    """Bodies as JSON or as a form, as Mastodon takes both (Mastodon.py sends forms);
    a form's ``name[]`` fields are lists under ``name``."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        if request.content_type == "application/json":
            return json.loads(request.body)
        data: dict[str, Any] = {}
        for key, values in request.POST.lists():
            if key.endswith("[]"):
                data[key[:-2]] = values
            else:
                data[key] = values[-1]
        return data


api = NinjaAPI(
    title="Feed: the Mastodon client API",
    version="1",
    description="Mastodon's REST API (the part docs/API.md lists) over the site's rules.",
    docs_url=None,  # Swagger's page loads scripts from a CDN, which the site's CSP refuses
    urls_namespace="api",
    parser=FormOrJson(),
)
errors.install(api)
ROUTERS = (
    instance,
    apps_endpoint,
    accounts,
    relationships,
    statuses,
    media,
    timelines,
    notifications,
    conversations,
    markers,
    search,
    discovery,
    personal,
)
for module in ROUTERS:
    api.add_router("/", module.router)

oauth_patterns = (
    [
        re_path(r"^authorize/?$", oauth.AuthorizeView.as_view(), name="authorize"),
        re_path(r"^token/?$", oauth.TokenView.as_view(), name="token"),
        re_path(r"^revoke/?$", oauth.RevokeView.as_view(), name="revoke"),
    ],
    "oauth",
)

urlpatterns = [
    # Async views: a stream outlives ninja's sync handlers (api.streaming).
    re_path(r"^api/v1/streaming/health$", streaming.health, name="streaming_health"),
    re_path(r"^api/v1/streaming/user$", streaming.user, name="streaming_user"),
    re_path(r"^api/v1/streaming$", streaming.streaming, name="streaming"),
    path("api/", api.urls),
    re_path(r"^api/(?P<rest>.*)$", errors.not_found),
    path("oauth/", include(oauth_patterns)),
    re_path(r"^\.well-known/oauth-authorization-server/?$", oauth.server_metadata),
]
urlpatterns += instance.wellknown_patterns
