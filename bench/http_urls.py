"""The site's URLconf plus ``/bench/bare/``, the floor ``bench_http`` measures pages against.

Only ``bench.http_settings`` names this module: the product's URLconf never
imports bench.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from feed_project.urls import urlpatterns as site_urlpatterns
from posts.models import Post

BARE_ITEMS = 20


def bare_page(request: HttpRequest) -> HttpResponse:
    """The newest 20 posts and their authors (one query), in a plain template.

    What a Django developer's first list page costs: the site's middleware
    (session, user, CSRF, last-active), one query, a loop without includes,
    forms or URL reversing.
    """
    posts = Post.objects.select_related("author").order_by("-timeline_key")[:BARE_ITEMS]
    return render(request, "bench/bare.html", {"posts": posts})


urlpatterns = [path("bench/bare/", bare_page, name="bench_bare"), *site_urlpatterns]
