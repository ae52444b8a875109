"""The follow graph under ``/@<username>/``: follow lists and actions, at the site root;
and ``/settings/import/follows/``, the import of a CSV of follows.

The ``<username:...>`` converter is registered by ``accounts.apps``.
"""

from django.urls import path

from relations import import_views, muted_word_views, request_views, views

app_name = "relations"

urlpatterns = [
    path("follow-requests/", request_views.follow_requests, name="follow_requests"),
    path("settings/muted-words/", muted_word_views.muted_words_page, name="muted_words"),
    path(
        "settings/muted-words/<int:word_id>/delete/",
        muted_word_views.delete_muted_word,
        name="delete_muted_word",
    ),
    path(
        "follow-requests/<username:username>/accept/",
        request_views.accept,
        name="accept_request",
    ),
    path(
        "follow-requests/<username:username>/reject/",
        request_views.reject,
        name="reject_request",
    ),
    path("@<username:username>/followers/", views.followers, name="followers"),
    path("@<username:username>/following/", views.following, name="following"),
    path("@<username:username>/follow/", views.follow, name="follow"),
    path("@<username:username>/unfollow/", views.unfollow, name="unfollow"),
    path("@<username:username>/follow-options/", views.follow_options, name="follow_options"),
    path("@<username:username>/block/", views.block, name="block"),
    path("@<username:username>/unblock/", views.unblock, name="unblock"),
    path("@<username:username>/mute/", views.mute, name="mute"),
    path("@<username:username>/unmute/", views.unmute, name="unmute"),
    path("settings/import/follows/", import_views.import_follows, name="import_follows"),
]
