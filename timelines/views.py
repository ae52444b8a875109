"""The home page and its "N new posts" notice."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.http import answers_json
from feed_project.pagination import Cursor
from posts import ids
from posts.forms import PostForm
from posts.selectors import viewer_marks
from posts.tags import tag_page, trending
from timelines.home import home_feed, new_entries_count
from timelines.suggestions.ranking import KEPT, suggestions_for

SIDEBAR_SUGGESTIONS = 3


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The reader's home feed, or a welcome page for visitors."""
    if not request.user.is_authenticated:
        return _welcome(request)
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    page = home_feed(reader=request.user, cursor=cursor)
    context = {
        "page": page,
        "form": PostForm(),
        # Only the newest page polls for newer posts (static/js/new-posts.js).
        "first_page": cursor.first_page,
        "newest_key": page.items[0].key if page.items else ids.LOWEST_KEY,
        "trending": trending(),  # a table of ten rows, written by a periodic task
        # Rows a task wrote for this reader (timelines.suggestions): one query, always.
        "suggestions": suggestions_for(request.user.pk, limit=SIDEBAR_SUGGESTIONS),
        **viewer_marks(request.user, [item.post for item in page.items]),
    }
    return render(request, "timelines/home.html", context)


PREVIEW_POSTS = 8


def _welcome(request: HttpRequest) -> HttpResponse:
    """Sign-up, and what people write: the trending tags (a table a task writes) and
    the newest posts of the first of them (the tag page's one query)."""
    tags = trending()
    preview = (
        tag_page(tag=tags[0].tag, viewer_id=None, cursor=Cursor(), limit=PREVIEW_POSTS).items
        if tags
        else []
    )
    context = {"trending": tags, "preview": preview, **viewer_marks(request.user, preview)}
    return render(request, "timelines/welcome.html", context)


@answers_json
@require_safe
def new_posts(request: HttpRequest) -> JsonResponse:
    """``{"count": N}``: about how many entries arrived above ``?after=``.

    Polled by every open home page, so it costs one cache or index lookup and
    never computes a feed (seed 002's query storm).
    """
    if not request.user.is_authenticated:
        return JsonResponse({"error": "Log in first."}, status=401)
    after = request.GET.get("after", ids.LOWEST_KEY)
    if not ids.is_timeline_key(after):
        return JsonResponse({"error": "after must be a timeline key."}, status=400)
    count = new_entries_count(reader_id=request.user.pk, after=after)
    return JsonResponse({"count": count}, headers={"Cache-Control": "no-store"})


@require_safe
@login_required
def suggestions(request: HttpRequest) -> HttpResponse:
    """Who to follow, all of the reader's precomputed suggestions (phones reach them here)."""
    people = suggestions_for(request.user.pk, limit=KEPT)
    return render(request, "timelines/suggestions.html", {"suggestions": people})
