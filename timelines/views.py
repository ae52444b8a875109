from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.pagination import BadCursor, Cursor
from posts.forms import PostForm
from timelines.selectors import home_feed


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The reader's home feed, or a welcome page for visitors."""
    if not request.user.is_authenticated:
        return render(request, "timelines/welcome.html")
    try:
        cursor = Cursor(before=request.GET.get("before"), after=request.GET.get("after"))
        page = home_feed(reader=request.user, cursor=cursor)
    except BadCursor as exc:
        raise BadRequest(str(exc)) from exc
    return render(request, "timelines/home.html", {"page": page, "form": PostForm()})
