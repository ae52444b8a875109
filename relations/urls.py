"""The follow graph under ``/@<username>/``: follow lists and actions, at the site root;
and ``/settings/import/follows/``, the import of a CSV of follows.

The ``<username:...>`` converter is registered by ``accounts.apps``.
"""

from django.urls import path

from relations import import_views, views

app_name = "relations"

urlpatterns = [
    path("@<username:username>/followers/", views.followers, name="followers"),
    path("@<username:username>/following/", views.following, name="following"),
    path("@<username:username>/follow/", views.follow, name="follow"),
    path("@<username:username>/unfollow/", views.unfollow, name="unfollow"),
    path("@<username:username>/block/", views.block, name="block"),
    path("@<username:username>/unblock/", views.unblock, name="unblock"),
    path("@<username:username>/mute/", views.mute, name="mute"),
    path("@<username:username>/unmute/", views.unmute, name="unmute"),
    path("settings/import/follows/", import_views.import_follows, name="import_follows"),
]
