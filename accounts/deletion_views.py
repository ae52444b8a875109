"""/settings/delete/: delete my account, with the password (and code) asked again."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts import deletion, twofactor
from accounts.forms import DeleteAccountForm
from feed_project.ratelimits import ratelimit


@login_required
@require_http_methods(["GET", "POST"])
@ratelimit("twofactor")
def delete_account(request: HttpRequest) -> HttpResponse:
    user = request.user
    form = DeleteAccountForm(request.POST or None, user=user)
    if form.is_valid():
        due = deletion.request_deletion(user=user)
        logout(request)
        if settings.ACCOUNT_DELETION_GRACE_DAYS:
            messages.info(
                request,
                f"Your account will be deleted on {due:%Y-%m-%d}. Log in before then to keep it.",
            )
        else:
            messages.info(request, "Your account is being deleted.")
        return redirect("accounts:login")
    context = {
        "form": form,
        "two_factor_on": twofactor.is_enabled(user),
        "grace_days": settings.ACCOUNT_DELETION_GRACE_DAYS,
    }
    return render(request, "accounts/delete.html", context, status=400 if form.errors else 200)
