"""``/search/?q=``: people and posts (posts.search)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.pagination import Cursor
from posts import ids
from posts.search import MAX_QUERY_LENGTH, checked_query, search
from posts.selectors import viewer_marks


@require_safe
def search_page(request: HttpRequest) -> HttpResponse:
    query = checked_query(request.GET.get("q", ""))
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    results = search(query=query, viewer=request.user, cursor=cursor)
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
