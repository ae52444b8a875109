from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST, require_safe

from feed_project.ratelimits import ratelimit
from posts import moderation, selectors, services
from posts.forms import PostForm
from posts.models import Post


def _visible_post_or_404(post_id: str) -> Post:
    post = selectors.get_visible_post(post_id)
    if post is None:
        raise Http404("No such post.")
    return post


def _safe_next(request: HttpRequest) -> str | None:
    """The ``next`` field when it points back into this site, else None."""
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


@require_POST
@login_required
@ratelimit("post")
def new_post(request: HttpRequest) -> HttpResponse:
    form = PostForm(request.POST)
    if not form.is_valid():
        # The home page is timelines' (posts never imports timelines): show the
        # compose box alone, with the error and the text kept.
        return render(request, "posts/compose.html", {"form": form}, status=400)
    services.create_post(author=request.user, text=form.cleaned_data["text"])
    return redirect("timelines:home")


@require_safe
def detail(request: HttpRequest, post_id: str) -> HttpResponse:
    if request.user.has_perm("posts.moderate"):  # moderators also open hidden posts
        post = moderation.post_for_moderator(post_id) or _visible_post_or_404(post_id)
    else:
        post = _visible_post_or_404(post_id)
    return render(request, "posts/detail.html", {"post": post})


@require_POST
@login_required
def delete(request: HttpRequest, post_id: str) -> HttpResponse:
    post = _visible_post_or_404(post_id)
    if post.author_id != request.user.pk:
        raise PermissionDenied("Only the author can delete a post.")
    services.delete_post(post=post)
    messages.success(request, "Post deleted.")
    target = _safe_next(request)
    if target is None or urlsplit(target).path == reverse("posts:detail", args=[post.pk]):
        # Back to where the delete button was, unless that was the post itself.
        return redirect("relations:profile", username=request.user.username)
    return redirect(target)
