"""/settings/...: the signed-in person's own account settings (accounts' part)."""

from django.urls import path

from accounts import deletion_views, export_views, password_views, security_views

app_name = "account_settings"

urlpatterns = [
    path("security/", security_views.security, name="security"),
    path("security/password/", password_views.PasswordChangeView.as_view(), name="password"),
    path("security/2fa/setup/", security_views.start_two_factor, name="2fa_setup"),
    path("security/2fa/confirm/", security_views.confirm_two_factor, name="2fa_confirm"),
    path("security/2fa/disable/", security_views.disable_two_factor, name="2fa_disable"),
    path(
        "security/2fa/recovery-codes/",
        security_views.new_recovery_codes,
        name="2fa_recovery_codes",
    ),
    path("security/sessions/end/", security_views.end_session, name="end_session"),
    path(
        "security/sessions/end-others/",
        security_views.end_other_sessions,
        name="end_other_sessions",
    ),
    path("invites/", security_views.invites, name="invites"),
    path("delete/", deletion_views.delete_account, name="delete"),
    path("export/", export_views.export_page, name="export"),
    path("export/download/<str:token>/", export_views.download, name="export_download"),
]
