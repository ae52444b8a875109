from django.urls import path

from posts import moderation_views, views

app_name = "posts"

urlpatterns = [
    path("new/", views.new_post, name="new"),
    # Any string: a malformed id is a 404 from the view, not a resolver miss.
    path("<str:post_id>/", views.detail, name="detail"),
    path("<str:post_id>/delete/", views.delete, name="delete"),
    path("<str:post_id>/like/", views.like, name="like"),
    path("<str:post_id>/unlike/", views.unlike, name="unlike"),
    path("<str:post_id>/repost/", views.repost, name="repost"),
    path("<str:post_id>/unrepost/", views.unrepost, name="unrepost"),
    path("<str:post_id>/report/", moderation_views.report_post, name="report"),
]
