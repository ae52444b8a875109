from django.urls import path

from timelines import views
from timelines.conversations import views as conversation_views
from timelines.notifications import views as notification_views

app_name = "timelines"

urlpatterns = [
    path("", views.home, name="home"),
    path("timeline/new/", views.new_posts, name="new_posts"),
    path("suggestions/", views.suggestions, name="suggestions"),
    path("notifications/", notification_views.notifications_page, name="notifications"),
    path("messages/", conversation_views.conversations, name="conversations"),
    path("messages/<str:key>/", conversation_views.conversation, name="conversation"),
    path("notifications/read/", notification_views.mark_notifications_read, name="mark_read"),
]
