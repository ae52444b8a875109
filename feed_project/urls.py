from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from feed_project.health import healthz
from posts.search_views import search_page

# A database that cannot be reached answers 503 and Retry-After, not 500.
handler500 = "feed_project.errors.server_error"

urlpatterns = [
    path("healthz", healthz, name="healthz"),  # for load balancers: no login, no slash
    # The Mastodon client API, /oauth/ and /.well-known/oauth-authorization-server.
    path("", include("api.urls")),
    # The admin's own log-in form would skip the second factor: log in through the site's.
    path("admin/login/", RedirectView.as_view(pattern_name="accounts:login", query_string=True)),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("settings/", include("accounts.settings_urls")),
    path("settings/apps/", include("api.settings_urls")),
    path("search/", search_page, name="search"),
    # /posts/..., /@<username>/ (the profile, a person's posts) and /@<username>/report/:
    # posts sits above relations, so it owns the routes that show posts.
    path("", include("posts.urls")),
    # /@<username>/...: follow lists and follow actions.
    path("", include("relations.urls")),
    path("", include("timelines.urls")),
]
