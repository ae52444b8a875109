"""The API's pages in the site's settings: the apps a person authorized, and the
button that takes one back (``api.authorized_apps`` does both)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from api.authorized_apps import authorized_apps, revoke_app
from api.scopes import SCOPES


@require_safe
@login_required
def apps_page(request: HttpRequest) -> HttpResponse:
    apps = [
        (app, [(scope, SCOPES.get(scope, scope)) for scope in app.scopes])
        for app in authorized_apps(user_id=request.user.pk)
    ]
    return render(request, "api/authorized_apps.html", {"apps": apps})


@require_POST
@login_required
def revoke(request: HttpRequest, application_id: int) -> HttpResponse:
    revoke_app(user_id=request.user.pk, application_id=application_id)
    messages.success(request, "The app's access is revoked: it is signed out of your account.")
    return redirect("api_settings:apps")
