from django.contrib import admin
from django.urls import include, path

from feed_project.health import healthz
from posts.search_views import search_page

urlpatterns = [
    path("healthz", healthz, name="healthz"),  # for load balancers: no login, no slash
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("search/", search_page, name="search"),
    # /posts/..., /@<username>/ (the profile, a person's posts) and /@<username>/report/:
    # posts sits above relations, so it owns the routes that show posts.
    path("", include("posts.urls")),
    # /@<username>/...: follow lists and follow actions.
    path("", include("relations.urls")),
    path("", include("timelines.urls")),
]
