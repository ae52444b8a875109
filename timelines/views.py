from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from feed_project.pagination import BadCursor, Cursor
from posts import ids
from posts.forms import PostForm
from posts.selectors import viewer_marks
from timelines import notifications
from timelines.selectors import home_feed, new_entries_count

# Below every real timeline key: "what is new" when the feed shown was empty.
LOWEST_KEY = ids.ALPHABET[0] * ids.KEY_LENGTH


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
    context = {
        "page": page,
        "form": PostForm(),
        # Only the newest page polls for newer posts (static/js/new-posts.js).
        "first_page": cursor.before is None and cursor.after is None,
        "newest_key": page.items[0].key if page.items else LOWEST_KEY,
        **viewer_marks(request.user, [item.post for item in page.items]),
    }
    return render(request, "timelines/home.html", context)


@require_safe
def new_posts(request: HttpRequest) -> JsonResponse:
    """``{"count": N}``: about how many entries arrived above ``?after=``.

    Polled by every open home page, so it costs one cache or index lookup and
    never computes a feed (seed 002's query storm).
    """
    if not request.user.is_authenticated:
        return JsonResponse({"error": "Log in first."}, status=401)
    after = request.GET.get("after", LOWEST_KEY)
    if not ids.is_timeline_key(after):
        return JsonResponse({"error": "after must be a timeline key."}, status=400)
    count = new_entries_count(reader_id=request.user.pk, after=after)
    return JsonResponse({"count": count}, headers={"Cache-Control": "no-store"})


@require_safe
@login_required
def notifications_page(request: HttpRequest) -> HttpResponse:
    try:
        cursor = Cursor(before=request.GET.get("before"), after=request.GET.get("after"))
        page = notifications.notifications_page(user=request.user, cursor=cursor)
    except BadCursor as exc:
        raise BadRequest(str(exc)) from exc
    return render(request, "timelines/notifications.html", {"page": page})


@require_POST
@login_required
def mark_notifications_read(request: HttpRequest) -> HttpResponse:
    notifications.mark_all_read(user=request.user)
    messages.success(request, "All notifications marked read.")
    return redirect("timelines:notifications")
