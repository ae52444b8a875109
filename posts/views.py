from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from accounts.decorators import verified_email_required
from feed_project.http import safe_next, wants_fragment
from feed_project.pagination import Cursor
from feed_project.ratelimits import ratelimit, retry_after, too_many_requests
from feed_project.refusals import Refused
from posts import ids, selectors, services
from posts.forms import PostForm, QuoteForm
from posts.models import Post
from posts.moderation import services as moderation


def _viewer_id(request: HttpRequest) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


def _post_for_action(request: HttpRequest, post_id: str) -> Post:
    """The live post (a repost's original) the signed-in user may act on, else 404."""
    return selectors.original_to_act_on(viewer_id=_viewer_id(request), post_id=post_id)


def _post_fragment(
    request: HttpRequest, post: Post, *, parent: Post | None = None, status: int = 200
) -> HttpResponse:
    """The post's ``<article>`` as the viewer now sees it, and any messages
    (static/js/site.js swaps in its action row): four queries, no page.
    ``parent``: the post a new reply answers, for its "replying to @name"."""
    context = {
        "post": post,
        "next_path": safe_next(request) or "",
        **selectors.viewer_marks(request.user, [post, *([parent] if parent else [])]),
    }
    return render(request, "posts/_post_fragment.html", context, status=status)


def _back_to(request: HttpRequest, post: Post) -> HttpResponse:
    if wants_fragment(request):
        # Read again: the action changed its counters in the database (F() updates).
        return _post_fragment(request, selectors.get_visible_post(post.pk) or post)
    # HttpResponseRedirect, not redirect(): a ``next`` like "home" is a path
    # to go back to, never the name of a view.
    return HttpResponseRedirect(safe_next(request) or reverse("posts:detail", args=[post.pk]))


def _quoted_post(form: PostForm, *, viewer_id: int) -> Post | None:
    """The post ``quote_of`` names (a repost's original), or None; the refusal of
    ``services.quotable`` becomes the form's error, for the compose box to show."""
    quote_of = form.cleaned_data["quote_of"]
    if not quote_of:
        return None
    try:
        return services.quotable(viewer_id=viewer_id, post_id=quote_of)
    except Refused as refused:
        form.add_error("quote_of", refused.message)
        return None


@require_POST
@login_required
@verified_email_required
@ratelimit("post")
def new_post(request: HttpRequest) -> HttpResponse:
    form = PostForm(request.POST, request.FILES)
    if not form.is_valid():
        # The home page is timelines' (posts never imports timelines): show the
        # compose box alone, with the error and the text kept.
        return render(request, "posts/compose.html", {"form": form}, status=400)
    parent = None
    if form.cleaned_data["in_reply_to"]:
        # A post you cannot see (gone, hidden, blocked either way) is one that
        # does not exist, as far as you know: 404, nothing written.
        parent = _post_for_action(request, form.cleaned_data["in_reply_to"])
    quoted = _quoted_post(form, viewer_id=request.user.pk)
    if form.errors:  # a quote of a post you may not see: a form error, nothing written
        return render(request, "posts/compose.html", {"form": form}, status=400)
    created = services.create_post(
        author=request.user,
        text=form.cleaned_data["text"],
        in_reply_to=parent,
        quote_of=quoted,
        spoiler_text=form.cleaned_data["spoiler_text"],
        media=form.cleaned_data["media"],
        visibility=form.cleaned_data["visibility"],
    )
    if wants_fragment(request):  # the new post, for the page to put at the top of its list
        return _post_fragment(request, created, parent=parent, status=201)
    back = safe_next(request)  # a conversation's reply box comes back to it
    if back is not None:
        return HttpResponseRedirect(back)
    if parent is not None:
        return redirect("posts:detail", post_id=parent.pk)
    return redirect("timelines:home")


@require_safe
def detail(request: HttpRequest, post_id: str) -> HttpResponse:
    post = moderation.post_to_open(user=request.user, post_id=post_id)  # moderators: hidden too
    if post.repost_of_id:  # a repost's page is its original's
        return redirect("posts:detail", post_id=post.repost_of_id)
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    thread = selectors.thread(post, viewer_id=_viewer_id(request), cursor=cursor)
    shown = [post, *(a for a in thread.ancestors if a is not None), *thread.replies.items]
    context = {
        "post": post,
        "thread": thread,
        "page": thread.replies,
        "form": PostForm(initial={"in_reply_to": post.pk, "visibility": post.visibility}),
        **selectors.viewer_marks(request.user, shown),
    }
    return render(request, "posts/detail.html", context)


@require_POST
@login_required
def delete(request: HttpRequest, post_id: str) -> HttpResponse:
    post = services.delete_own_post(user=request.user, post_id=post_id)
    messages.success(request, "Post deleted.")
    target = safe_next(request)
    if target is None or urlsplit(target).path == reverse("posts:detail", args=[post.pk]):
        # Back to where the delete button was, unless that was the post itself.
        return redirect("posts:profile", username=request.user.username)
    return HttpResponseRedirect(target)  # a path, never the name of a view


@require_POST
@login_required
@ratelimit("like")
def like(request: HttpRequest, post_id: str) -> HttpResponse:
    post = _post_for_action(request, post_id)
    services.like(user=request.user, post=post)
    return _back_to(request, post)


@require_POST
@login_required
@ratelimit("like")
def unlike(request: HttpRequest, post_id: str) -> HttpResponse:
    post = _post_for_action(request, post_id)
    services.unlike(user=request.user, post=post)
    return _back_to(request, post)


@require_POST
@login_required
@verified_email_required
@ratelimit("like")
def repost(request: HttpRequest, post_id: str) -> HttpResponse:
    # Refused before the form is read: a followers-only or direct post is never shared.
    post = services.shareable(_post_for_action(request, post_id))
    form = QuoteForm(request.POST)
    if not form.is_valid():
        return render(request, "posts/compose.html", {"form": form}, status=400)
    if form.cleaned_data["text"]:  # a repost with a comment is a quote post of its own
        wait = retry_after(request, "post")  # limited as a post, not as a repost
        if wait is not None:
            return too_many_requests(request, wait)
        services.create_post(author=request.user, text=form.cleaned_data["text"], quote_of=post)
        messages.success(request, "Quoted.")
        return _back_to(request, post)
    services.repost(user=request.user, post=post)  # a second repost is the first one
    messages.success(request, "Reposted.")
    return _back_to(request, post)


@require_POST
@login_required
@ratelimit("like")
def unrepost(request: HttpRequest, post_id: str) -> HttpResponse:
    post = _post_for_action(request, post_id)
    if services.undo_repost(user=request.user, post=post):
        messages.success(request, "Repost undone.")
    return _back_to(request, post)
