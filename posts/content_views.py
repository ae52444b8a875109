"""Pages of a post's content: tag pages, trending tags, editing and history."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from accounts.decorators import verified_email_required
from feed_project.pagination import Cursor
from feed_project.ratelimits import retry_after, too_many_requests
from posts import edits, ids, selectors, tags
from posts.forms import EditForm
from posts.media import media_by_post


def _viewer_id(request: HttpRequest) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


@require_safe
def tag_page(request: HttpRequest, tag: str) -> HttpResponse:
    """``/tags/<tag>/``: the live posts carrying the tag that the reader may see, newest first."""
    normalized = tags.normalize_tag(tag)
    if normalized is None:
        raise Http404("Not a tag.")
    if normalized != tag:  # one address per tag: /tags/Django/ is /tags/django/
        return redirect("posts:tag", tag=normalized)
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    page = tags.tag_page(tag=normalized, viewer_id=_viewer_id(request), cursor=cursor)
    context = {"tag": normalized, "page": page, **selectors.viewer_marks(request.user, page.items)}
    return render(request, "posts/tag.html", context)


@require_safe
def trending_page(request: HttpRequest) -> HttpResponse:
    """``/tags/``: the tags most people used in the last 24 hours (computed by a task)."""
    return render(request, "posts/trending.html", {"trending": tags.trending()})


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
@verified_email_required
def edit(request: HttpRequest, post_id: str) -> HttpResponse:
    """``/posts/<id>/edit/``: the author changes what posts.edits.EDITABLE_FIELDS names."""
    post = edits.editable_post(user_id=_viewer_id(request), post_id=post_id)
    # An edit notifies everyone who replied, liked or reposted: limited as posting is.
    wait = retry_after(request, "post") if request.method == "POST" else None
    if wait is not None:
        return too_many_requests(request, wait)
    initial = {name: getattr(post, name) for name in edits.EDITABLE_FIELDS}
    images = media_by_post([post]).get(post.pk, [])
    data = request.POST if request.method == "POST" else None
    form = EditForm(data, initial=initial, images=len(images))
    context = {"post": post, "form": form, "images": images}
    if request.method == "POST":
        if form.is_valid():
            alt_texts = form.cleaned_data.pop("alt_texts")
            edits.edit_post(post=post, changes=form.cleaned_data, alt_texts=alt_texts)
            return redirect("posts:detail", post_id=post.pk)
        return render(request, "posts/edit.html", context, status=400)
    return render(request, "posts/edit.html", context)


@require_safe
def history(request: HttpRequest, post_id: str) -> HttpResponse:
    """``/posts/<id>/history/``: every version of a post, newest first."""
    post = edits.post_with_history(viewer_id=_viewer_id(request), post_id=post_id)
    return render(request, "posts/history.html", {"post": post, "versions": edits.history(post)})
