"""``/notifications/``: the list, and "mark all read"."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from feed_project.pagination import Cursor
from timelines.notifications import selectors, services


@require_safe
@login_required
def notifications_page(request: HttpRequest) -> HttpResponse:
    cursor = Cursor.from_request(request, selectors.is_cursor)
    page = selectors.notifications_page(user=request.user, cursor=cursor)
    return render(request, "timelines/notifications.html", {"page": page})


@require_POST
@login_required
def mark_notifications_read(request: HttpRequest) -> HttpResponse:
    services.mark_all_read(user=request.user)
    messages.success(request, "All notifications marked read.")
    return redirect("timelines:notifications")
