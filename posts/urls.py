"""The posts app's routes, at the site root: ``/posts/...``, ``/@<username>/`` (the
profile, a person's posts) and ``/@<username>/report/``."""

from django.urls import include, path

from posts import content_views, media_views, profile_views, public_timeline, views

app_name = "posts"

urlpatterns = [
    path("posts/new/", views.new_post, name="new"),
    # Any string: a malformed id is a 404 from the view, not a resolver miss.
    path("posts/<str:post_id>/", views.detail, name="detail"),
    path("posts/<str:post_id>/delete/", views.delete, name="delete"),
    path("posts/<str:post_id>/like/", views.like, name="like"),
    path("posts/<str:post_id>/unlike/", views.unlike, name="unlike"),
    path("posts/<str:post_id>/repost/", views.repost, name="repost"),
    path("posts/<str:post_id>/unrepost/", views.unrepost, name="unrepost"),
    # A post's images, checked against who may see the post (posts/media_views.py).
    path("posts/<str:post_id>/media/<int:position>/", media_views.media_file, name="media"),
    path(
        "posts/<str:post_id>/media/<int:position>/thumbnail/",
        media_views.media_file,
        {"thumbnail": True},
        name="media_thumbnail",
    ),
    # An image uploaded ahead of its post, to the app that uploaded it (posts/uploads.py).
    path(
        "media/uploads/<int:author_id>/<int:media_id>/<str:token>/",
        media_views.upload_file,
        name="upload",
    ),
    path(
        "media/uploads/<int:author_id>/<int:media_id>/<str:token>/thumbnail/",
        media_views.upload_file,
        {"thumbnail": True},
        name="upload_thumbnail",
    ),
    path("posts/<str:post_id>/edit/", content_views.edit, name="edit"),
    path("posts/<str:post_id>/history/", content_views.history, name="history"),
    path("public/", public_timeline.public_timeline, name="public"),
    path("tags/", content_views.trending_page, name="trending"),
    path("tags/<str:tag>/", content_views.tag_page, name="tag"),
    path("@<username:username>/", profile_views.profile, name="profile"),
    # posts:report and posts:report_user.
    path("", include("posts.moderation.urls")),
]
