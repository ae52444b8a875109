"""``/@<username>/``: a person's profile page with their posts, at the site root."""

from django.urls import path

import accounts.converters  # noqa: F401  (registers <username:...>)
from posts import profile_views

app_name = "profiles"

urlpatterns = [
    path("@<username:username>/", profile_views.profile, name="profile"),
]
