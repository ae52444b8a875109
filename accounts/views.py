import time
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts import addresses, avatar_upload, registration, services, twofactor
from accounts.forms import CodeForm, EmailChangeForm, LoginForm, ProfileForm, SignupForm
from accounts.middleware import TWO_FACTOR_DONE
from accounts.models import User
from accounts.tokens import read_verification_token
from feed_project.http import redirect_back
from feed_project.ratelimits import PENDING_TWO_FACTOR_SESSION_KEY as PENDING
from feed_project.ratelimits import ratelimit

# A log-in waiting for its code is forgotten after this long: the password again.
PENDING_SECONDS = 300


def base_url(request: HttpRequest) -> str:
    """The site's scheme and host as this request reached it (ALLOWED_HOSTS checked it)."""
    return request.build_absolute_uri("/").rstrip("/")


def _refused_signup(request: HttpRequest, refused: registration.SignupClosed) -> HttpResponse:
    """The page that says why, and how to get in: more than the standard 403 page."""
    return render(request, "accounts/signup_closed.html", {"mode": refused.mode}, status=403)


@require_http_methods(["GET", "POST"])
@ratelimit("signup")
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("timelines:home")
    mode = registration.mode()
    token = request.GET.get("invite", "") if request.method == "GET" else None
    try:
        registration.check_signup_open(mode=mode, invite_token=token)
    except registration.SignupClosed as refused:
        return _refused_signup(request, refused)
    if request.method == "GET":
        form = SignupForm(initial={"invite": token}, mode=mode)
    else:
        form = SignupForm(request.POST, mode=mode)
    if form.is_bound and form.is_valid():
        user = _register(request, form)
        if user is not None:
            return _signed_up(request, user, form.cleaned_data["email"], mode)
    status = 400 if form.errors else 200
    return render(request, "accounts/signup.html", {"form": form}, status=status)


def _register(request: HttpRequest, form: SignupForm) -> User | None:
    data = form.cleaned_data
    signup = registration.Signup(
        username=data["username"],
        password=data["password1"],
        email=data["email"],
        display_name=data["display_name"],
        reason=data.get("reason", ""),
        invite=form.invite,
        time_zone=data.get("time_zone", ""),
    )
    try:
        # A savepoint: losing a race (the username, the invite's last use)
        # must not spoil the request.
        with transaction.atomic():
            return registration.register(signup=signup, base_url=base_url(request))
    except IntegrityError:
        form.add_error("username", "That username is taken.")
    except registration.InviteUsedUp:
        form.add_error(None, "This invite link has just been used up or has expired.")
    return None


def _signed_up(request: HttpRequest, user: User, email: str, mode: str) -> HttpResponse:
    # The same words whether or not another account has this address (accounts.addresses).
    sent = f"We sent a mail to {email}: follow its link to confirm your address."
    if mode == "approval":
        messages.info(request, sent)
        return redirect("accounts:signup_pending")
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, f"Welcome, {user.name}! {sent}")
    return redirect("timelines:home")


@require_safe
def signup_pending(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/signup_pending.html")


@method_decorator(ratelimit("login"), name="post")
class SiteLoginView(LoginView):
    """Django's log-in; with two-factor on, the password only opens the second step."""

    template_name = "accounts/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True

    def form_valid(self, form: Any) -> HttpResponse:
        user = form.get_user()
        if not twofactor.is_enabled(user):
            return super().form_valid(form)
        # Not logged in yet: the session only remembers whose code to ask for.
        self.request.session[PENDING] = {
            "user_id": user.pk,
            "backend": user.backend,
            "since": int(time.time()),
            "next": self.get_redirect_url(),
        }
        return redirect("accounts:login_code")


def _pending_user(request: HttpRequest) -> tuple[User | None, dict[str, Any]]:
    pending = request.session.get(PENDING)
    if not isinstance(pending, dict) or time.time() - pending.get("since", 0) > PENDING_SECONDS:
        return None, {}
    user = User.objects.filter(pk=pending.get("user_id"), is_active=True).first()
    return user, pending


@require_http_methods(["GET", "POST"])
@ratelimit("twofactor")
def login_code(request: HttpRequest) -> HttpResponse:
    """The log-in's second step: the account is signed in only once its code is right."""
    user, pending = _pending_user(request)
    if user is None:
        request.session.pop(PENDING, None)
        messages.info(request, "Please log in again: the code was not given in time.")
        return redirect("accounts:login")
    form = CodeForm(request.POST or None)
    if form.is_valid():
        if twofactor.check_code(user=user, code=form.cleaned_data["code"]):
            del request.session[PENDING]
            login(request, user, backend=pending["backend"])
            request.session[TWO_FACTOR_DONE] = True
            return HttpResponseRedirect(
                pending.get("next") or resolve_url(settings.LOGIN_REDIRECT_URL)
            )
        form.add_error("code", "That code is not right, or was used already.")
    status = 400 if form.errors else 200
    return render(request, "accounts/login_code.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def edit_profile(request: HttpRequest) -> HttpResponse:
    user = request.user
    initial = {
        "display_name": user.display_name,
        "bio": user.bio,
        "time_zone": user.time_zone,
        "locked": user.locked,
    }
    if request.method == "POST":
        form = ProfileForm(request.POST, request.FILES)
    else:
        form = ProfileForm(initial=initial)
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        services.update_profile(
            user=user,
            display_name=data["display_name"],
            bio=data["bio"],
            time_zone=data["time_zone"],
            locked=data["locked"],
        )
        if data["avatar"] is not None or data["remove_avatar"]:
            avatar_upload.replace(user=user, picture=data["avatar"])
        messages.success(request, "Profile saved.")
        return redirect("posts:profile", username=user.username)
    status = 400 if form.errors else 200
    return render(request, "accounts/edit_profile.html", {"form": form}, status=status)


VERIFY_MESSAGES = {
    addresses.Outcome.VERIFIED: "Thank you: your e-mail address is confirmed.",
    addresses.Outcome.ALREADY: "Your e-mail address was confirmed already.",
}


@require_http_methods(["GET", "POST"])
def verify_email(request: HttpRequest, token: str) -> HttpResponse:
    """A verification link: GET asks to confirm (mail scanners open links), POST confirms."""
    named = read_verification_token(token)
    if named is None:
        return render(request, "accounts/verify_email.html", {"invalid": True}, status=400)
    if request.method == "GET":
        return render(request, "accounts/verify_email.html", {"address": named[1]})
    outcome = addresses.confirm(user_id=named[0], address=named[1])
    if outcome in VERIFY_MESSAGES:
        messages.success(request, VERIFY_MESSAGES[outcome])
        return redirect("timelines:home")
    status = 409 if outcome is addresses.Outcome.TAKEN else 400
    context = {"outcome": outcome.value, "address": named[1]}
    return render(request, "accounts/verify_email.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
@ratelimit("account_mail")
def change_email(request: HttpRequest) -> HttpResponse:
    user = request.user
    form = EmailChangeForm(request.POST or None, user=user)
    if form.is_valid():
        address = form.cleaned_data["email"]
        addresses.request_change(user=user, address=address, base_url=base_url(request))
        messages.success(
            request,
            f"We sent a link to {address}. Your address changes when you follow it.",
        )
        return redirect("account_settings:security")
    status = 400 if form.errors else 200
    return render(request, "accounts/change_email.html", {"form": form}, status=status)


@require_POST
@login_required
@ratelimit("account_mail")
def resend_verification(request: HttpRequest) -> HttpResponse:
    if addresses.resend(user=request.user, base_url=base_url(request)):
        messages.success(request, "We sent the link again.")
    else:
        messages.info(request, "Your e-mail address is confirmed already.")
    return redirect_back(request, reverse("account_settings:security"))
