from django.urls import path

from timelines import views

app_name = "timelines"

urlpatterns = [
    path("", views.home, name="home"),
    path("timeline/new/", views.new_posts, name="new_posts"),
    path("notifications/", views.notifications_page, name="notifications"),
    path("notifications/read/", views.mark_notifications_read, name="mark_read"),
]
