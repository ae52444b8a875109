from django.contrib.auth.views import LogoutView
from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.SiteLoginView.as_view(), name="login"),
    # Django's LogoutView answers POST only (GET is a 405).
    path("logout/", LogoutView.as_view(), name="logout"),
    path("profile/", views.edit_profile, name="edit_profile"),
]
