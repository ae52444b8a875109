"""The report routes, in the ``posts`` namespace (``posts.urls`` includes them at the site root)."""

from django.urls import path

from posts.moderation import views

urlpatterns = [
    path("posts/<str:post_id>/report/", views.report_post, name="report"),
    path("@<username:username>/report/", views.report_user, name="report_user"),
]
