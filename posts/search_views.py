"""``/search/?q=``: people and posts (posts.search)."""

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.pagination import BadCursor, Cursor
from posts.search import MAX_QUERY_LENGTH, normalize_query, search
from posts.selectors import viewer_marks


@require_safe
def search_page(request: HttpRequest) -> HttpResponse:
    raw = request.GET.get("q", "")
    # Refused, not trimmed: a trimmed query would answer a question nobody asked.
    if len(raw) > MAX_QUERY_LENGTH:
        raise BadRequest(f"A search is at most {MAX_QUERY_LENGTH} characters.")
    try:
        cursor = Cursor(before=request.GET.get("before"), after=request.GET.get("after"))
        results = search(query=normalize_query(raw), viewer=request.user, cursor=cursor)
    except BadCursor as exc:
        raise BadRequest(str(exc)) from exc
    return render(
        request,
        "search.html",
        {
            "results": results,
            "page": results.posts,
            "max_length": MAX_QUERY_LENGTH,
            **viewer_marks(request.user, results.posts.items),
        },
    )
