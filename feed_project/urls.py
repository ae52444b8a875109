from django.contrib import admin
from django.urls import include, path

from posts.search_views import search_page

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("search/", search_page, name="search"),
    # /posts/... and /@<username>/report/ (posts sits above relations, so it owns the route).
    path("", include("posts.urls")),
    # /@<username>/...: profile, follow lists and follow actions.
    path("", include("relations.urls")),
    path("", include("timelines.urls")),
]
