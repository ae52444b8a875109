"""/settings/apps/...: the API's part of the signed-in person's settings (the apps
they authorized), beside accounts' (``accounts.settings_urls``), which may not
import the API."""

from django.urls import path

from api import views

app_name = "api_settings"

urlpatterns = [
    path("", views.apps_page, name="apps"),
    path("<int:application_id>/revoke/", views.revoke, name="revoke"),
]
