from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_http_methods

from accounts import services
from accounts.forms import LoginForm, ProfileForm, SignupForm
from feed_project.ratelimits import ratelimit


@require_http_methods(["GET", "POST"])
@ratelimit("signup")
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("timelines:home")
    form = SignupForm(request.POST) if request.method == "POST" else SignupForm()
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            # A savepoint: losing the race for a username must not spoil the request.
            with transaction.atomic():
                user = services.create_user(
                    username=data["username"],
                    password=data["password1"],
                    display_name=data["display_name"],
                )
        except IntegrityError:
            form.add_error("username", "That username is taken.")
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.name}!")
            return redirect("timelines:home")
    status = 400 if form.errors else 200
    return render(request, "accounts/signup.html", {"form": form}, status=status)


@method_decorator(ratelimit("login"), name="post")
class SiteLoginView(LoginView):
    template_name = "accounts/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True


@login_required
@require_http_methods(["GET", "POST"])
def edit_profile(request: HttpRequest) -> HttpResponse:
    user = request.user
    initial = {"display_name": user.display_name, "bio": user.bio}
    form = ProfileForm(request.POST) if request.method == "POST" else ProfileForm(initial=initial)
    if form.is_bound and form.is_valid():
        services.update_profile(
            user=user, display_name=form.cleaned_data["display_name"], bio=form.cleaned_data["bio"]
        )
        messages.success(request, "Profile saved.")
        return redirect("posts:profile", username=user.username)
    status = 400 if form.errors else 200
    return render(request, "accounts/edit_profile.html", {"form": form}, status=status)
