"""/settings/security/: e-mail, password, two-factor set-up, sessions; /settings/invites/."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts import registration, sessions, twofactor
from accounts.forms import ConfirmTwoFactorForm, InviteForm, PasswordAgainForm
from accounts.middleware import TWO_FACTOR_DONE
from accounts.views import base_url
from feed_project.ratelimits import ratelimit

NEW_CODES = "accounts_new_recovery_codes"  # shown once by the next security page


def _page(request: HttpRequest, status: int = 200, **forms: Any) -> HttpResponse:
    user = request.user
    setup = twofactor.pending_setup(user)
    context: dict[str, Any] = {
        "two_factor_on": twofactor.is_enabled(user),
        "codes_left": twofactor.recovery_codes_left(user),
        "new_codes": request.session.pop(NEW_CODES, None),
        "sessions": sessions.list_sessions(user=user, current_key=request.session.session_key),
        "confirm_form": forms.get("confirm_form") or ConfirmTwoFactorForm(),
        "password_form": forms.get("password_form") or PasswordAgainForm(user=user),
        "may_invite": registration.may_invite(user),
    }
    if setup is not None:
        uri = twofactor.provisioning_uri(user=user, secret=setup.secret)
        context |= {"setup_secret": setup.secret, "setup_qr": twofactor.qr_code_data_uri(uri)}
    return render(request, "accounts/security.html", context, status=status)


@require_safe
@login_required
def security(request: HttpRequest) -> HttpResponse:
    return _page(request)


@require_POST
@login_required
def start_two_factor(request: HttpRequest) -> HttpResponse:
    if twofactor.is_enabled(request.user):
        messages.info(request, "Two-factor authentication is on already.")
    else:
        twofactor.start_setup(user=request.user)
        messages.info(request, "Scan the code with your authenticator app, then type its code.")
    return redirect("account_settings:security")


@require_POST
@login_required
@ratelimit("twofactor")
def confirm_two_factor(request: HttpRequest) -> HttpResponse:
    form = ConfirmTwoFactorForm(request.POST)
    if form.is_valid():
        codes = twofactor.confirm_setup(user=request.user, code=form.cleaned_data["code"])
        if codes is not None:
            request.session[NEW_CODES] = codes
            request.session[TWO_FACTOR_DONE] = True
            messages.success(request, "Two-factor authentication is on.")
            return redirect("account_settings:security")
        form.add_error("code", "That code is not right: check the app's clock and try again.")
    return _page(request, status=400, confirm_form=form)


def _password_checked(request: HttpRequest) -> tuple[bool, PasswordAgainForm]:
    form = PasswordAgainForm(request.POST, user=request.user)
    return form.is_valid(), form


@require_POST
@login_required
def disable_two_factor(request: HttpRequest) -> HttpResponse:
    ok, form = _password_checked(request)
    if not ok:
        return _page(request, status=400, password_form=form)
    twofactor.disable(user=request.user)
    messages.success(request, "Two-factor authentication is off.")
    return redirect("account_settings:security")


@require_POST
@login_required
def new_recovery_codes(request: HttpRequest) -> HttpResponse:
    ok, form = _password_checked(request)
    if not ok:
        return _page(request, status=400, password_form=form)
    if not twofactor.is_enabled(request.user):
        messages.info(request, "Recovery codes come with two-factor authentication: set it up.")
        return redirect("account_settings:security")
    request.session[NEW_CODES] = twofactor.new_recovery_codes(user=request.user)
    messages.success(request, "New recovery codes: the old ones no longer work.")
    return redirect("account_settings:security")


@require_POST
@login_required
def end_session(request: HttpRequest) -> HttpResponse:
    session_id = str(request.POST.get("session", ""))[:64]
    key = request.session.session_key
    if sessions.end_session(user=request.user, session_id=session_id, current_key=key):
        messages.success(request, "That session is logged out.")
    else:
        messages.info(request, "That session had ended already.")
    return redirect("account_settings:security")


@require_POST
@login_required
def end_other_sessions(request: HttpRequest) -> HttpResponse:
    key = request.session.session_key
    ended = sessions.end_other_sessions(user=request.user, current_key=key)
    messages.success(request, f"Logged out everywhere else ({ended} session{'s' * (ended != 1)}).")
    return redirect("account_settings:security")


@login_required
@require_http_methods(["GET", "POST"])
@ratelimit("account_mail")
def invites(request: HttpRequest) -> HttpResponse:
    registration.check_may_invite(user=request.user)
    form = InviteForm(request.POST or None)
    if form.is_valid():
        data = form.cleaned_data
        invite = registration.create_invite(
            user=request.user, days=data["days"], max_uses=data["max_uses"]
        )
        messages.success(request, f"Invite link made: it works {invite.max_uses} time(s).")
        return redirect("account_settings:invites")
    context = {
        "form": form,
        "invites": registration.invites_of(request.user),
        "signup_url": base_url(request) + reverse("accounts:signup") + "?invite=",
        "mode": registration.mode(),
    }
    return render(request, "accounts/invites.html", context, status=400 if form.errors else 200)
