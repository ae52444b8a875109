"""View decorators other apps use: one line at the view keeps the rule in accounts."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.addresses import may_post


def verified_email_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Refuse (403, with how to verify) a signed-in user who may not post yet.

    Place it under ``login_required``. Only with REQUIRE_EMAIL_VERIFICATION on.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and not may_post(request.user):
            return render(request, "accounts/verify_required.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped
