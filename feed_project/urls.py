from django.contrib import admin
from django.urls import include, path

from posts.search_views import search_page

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("posts/", include("posts.urls")),
    path("search/", search_page, name="search"),
    # /@<username>/: the profile (posts); /@<username>/...: follow lists and actions.
    path("", include("posts.profile_urls")),
    path("", include("relations.urls")),
    path("", include("timelines.urls")),
]
