from django.contrib.auth.views import LogoutView
from django.urls import path

from accounts import avatar_upload, avatars, password_views, views

app_name = "accounts"

urlpatterns = [
    path("avatar/<username:username>.svg", avatars.generated_view, name="avatar"),
    path("avatar/<username:username>.png", avatars.generated_png_view, name="avatar_png"),
    path("avatars/<str:user_id>/<str:token>.webp", avatar_upload.serve, name="avatar_file"),
    path("avatars/<str:user_id>/<str:token>.png", avatar_upload.serve_png, name="avatar_file_png"),
    path("signup/", views.signup, name="signup"),
    path("signup/pending/", views.signup_pending, name="signup_pending"),
    path("login/", views.SiteLoginView.as_view(), name="login"),
    path("login/code/", views.login_code, name="login_code"),
    # Django's LogoutView answers POST only (GET is a 405).
    path("logout/", LogoutView.as_view(), name="logout"),
    path("profile/", views.edit_profile, name="edit_profile"),
    path("email/", views.change_email, name="change_email"),
    path("email/resend/", views.resend_verification, name="resend_verification"),
    path("verify/<str:token>/", views.verify_email, name="verify_email"),
    path("password/reset/", password_views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "password/reset/sent/",
        password_views.PasswordResetSentView.as_view(),
        name="password_reset_sent",
    ),
    path(
        "password/reset/done/",
        password_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path(
        "password/reset/<uidb64>/<token>/",
        password_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
]
