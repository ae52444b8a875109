from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("posts/", include("posts.urls")),
    # /@<username>/...: profile, follow lists and follow actions.
    path("", include("relations.urls")),
    path("", include("timelines.urls")),
]
