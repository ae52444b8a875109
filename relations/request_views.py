"""``/follow-requests/``: a locked account's pending follow requests, accepted or rejected."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from feed_project.pagination import Cursor
from feed_project.ratelimits import ratelimit
from relations import selectors, services


@require_safe
@login_required
def follow_requests(request: HttpRequest) -> HttpResponse:
    cursor = Cursor.from_request(request, selectors.is_relation_cursor)
    page = selectors.follow_requests_page(user=request.user, cursor=cursor)
    return render(request, "relations/follow_requests.html", {"page": page})


@require_POST
@login_required
@ratelimit("follow")
def accept(request: HttpRequest, username: str) -> HttpResponse:
    requester = selectors.person_named(username)
    if services.accept_request(user=request.user, requester=requester):
        messages.success(request, f"@{requester.username} follows you now.")
    else:
        messages.info(request, f"@{requester.username} has no pending request.")
    return redirect("relations:follow_requests")


@require_POST
@login_required
@ratelimit("follow")
def reject(request: HttpRequest, username: str) -> HttpResponse:
    requester = selectors.person_named(username)
    if services.reject_request(user=request.user, requester=requester):
        messages.success(request, f"You turned down @{requester.username}'s request.")
    else:
        messages.info(request, f"@{requester.username} has no pending request.")
    return redirect("relations:follow_requests")
