"""Everything under ``/@<username>/``, included at the site root."""

from django.urls import path, register_converter

from posts.moderation_views import report_user
from relations import views


class UsernameConverter:
    """The characters a username may have (accounts.models.username_validator)."""

    regex = "[A-Za-z0-9_]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(UsernameConverter, "username")

app_name = "relations"

urlpatterns = [
    path("@<username:username>/", views.profile, name="profile"),
    path("@<username:username>/followers/", views.followers, name="followers"),
    path("@<username:username>/following/", views.following, name="following"),
    path("@<username:username>/follow/", views.follow, name="follow"),
    path("@<username:username>/unfollow/", views.unfollow, name="unfollow"),
    path("@<username:username>/block/", views.block, name="block"),
    path("@<username:username>/unblock/", views.unblock, name="unblock"),
    path("@<username:username>/mute/", views.mute, name="mute"),
    path("@<username:username>/unmute/", views.unmute, name="unmute"),
    path("@<username:username>/report/", report_user, name="report"),
]
