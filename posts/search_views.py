"""``/search/?q=``: people and posts (posts.search)."""

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.pagination import Cursor
from posts import ids
from posts.search import MAX_QUERY_LENGTH, normalize_query, search
from posts.selectors import viewer_marks


@require_safe
def search_page(request: HttpRequest) -> HttpResponse:
    raw = request.GET.get("q", "")
    # Refused, not trimmed: a trimmed query would answer a question nobody asked.
    if len(raw) > MAX_QUERY_LENGTH:
        raise BadRequest(f"A search is at most {MAX_QUERY_LENGTH} characters.")
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    results = search(query=normalize_query(raw), viewer=request.user, cursor=cursor)
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
