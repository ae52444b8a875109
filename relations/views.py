"""Profile pages (``/@<username>/...``): the person, their posts, their follow lists."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST, require_safe

from accounts.models import User
from feed_project.pagination import BadCursor, Cursor, Page
from feed_project.ratelimits import ratelimit
from posts.selectors import author_posts_page
from relations import selectors, services
from relations.services import SelfFollowError


def _user_or_404(username: str) -> User:
    # Usernames are unique case-insensitively: /@Alice/ is alice's page.
    return get_object_or_404(User, username__iexact=username)


def _cursor(request: HttpRequest) -> Cursor:
    """The ``?before=`` / ``?after=`` cursor; BadCursor when both are given."""
    return Cursor(before=request.GET.get("before"), after=request.GET.get("after"))


def _redirect_back(request: HttpRequest, person: User) -> HttpResponse:
    """To the ``next`` field when it stays on this site, else to the person's profile."""
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect("relations:profile", username=person.username)


@require_safe
def profile(request: HttpRequest, username: str) -> HttpResponse:
    person = _user_or_404(username)
    try:
        page = author_posts_page(author=person, cursor=_cursor(request))
    except BadCursor as exc:
        raise BadRequest(str(exc)) from exc
    viewer = request.user
    can_follow = viewer.is_authenticated and viewer.pk != person.pk
    following = can_follow and selectors.is_following(follower_id=viewer.pk, followee_id=person.pk)
    context = {"person": person, "page": page, "can_follow": can_follow, "following": following}
    return render(request, "relations/profile.html", context)


def _relation_list(request: HttpRequest, username: str, *, which: str) -> HttpResponse:
    person = _user_or_404(username)
    read = selectors.followers_page if which == "followers" else selectors.following_page
    try:
        page: Page[selectors.Relation] = read(
            user=person, viewer=request.user, cursor=_cursor(request)
        )
    except BadCursor as exc:
        raise BadRequest(str(exc)) from exc
    context = {"person": person, "page": page, "which": which}
    return render(request, "relations/relation_list.html", context)


@require_safe
def followers(request: HttpRequest, username: str) -> HttpResponse:
    return _relation_list(request, username, which="followers")


@require_safe
def following(request: HttpRequest, username: str) -> HttpResponse:
    return _relation_list(request, username, which="following")


@require_POST
@login_required
@ratelimit("follow")
def follow(request: HttpRequest, username: str) -> HttpResponse:
    person = _user_or_404(username)
    try:
        created = services.follow(follower=request.user, followee=person)
    except SelfFollowError:
        messages.error(request, "You cannot follow yourself.")
    else:
        if created:
            messages.success(request, f"You now follow @{person.username}.")
        else:
            messages.info(request, f"You already follow @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def unfollow(request: HttpRequest, username: str) -> HttpResponse:
    person = _user_or_404(username)
    if services.unfollow(follower=request.user, followee=person):
        messages.success(request, f"You no longer follow @{person.username}.")
    else:
        messages.info(request, f"You did not follow @{person.username}.")
    return _redirect_back(request, person)
