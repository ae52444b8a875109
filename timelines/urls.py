from django.urls import path

from timelines import views

app_name = "timelines"

urlpatterns = [
    path("", views.home, name="home"),
]
