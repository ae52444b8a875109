"""The follow graph's pages under ``/@<username>/``: follow lists, follow, block, mute."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from accounts.models import User
from feed_project.http import redirect_back
from feed_project.pagination import Cursor, Page
from feed_project.ratelimits import ratelimit
from relations import selectors, services
from relations.services import BlockedError, SelfRelationError


def _redirect_back(request: HttpRequest, person: User) -> HttpResponse:
    """To the ``next`` field when it stays on this site, else to the person's profile."""
    return redirect_back(request, reverse("posts:profile", args=[person.username]))


def _relation_list(request: HttpRequest, username: str, *, which: str) -> HttpResponse:
    person = selectors.person_named(username)
    read = selectors.followers_page if which == "followers" else selectors.following_page
    cursor = Cursor.from_request(request, selectors.is_relation_cursor)
    page: Page[selectors.Relation] = read(user=person, viewer=request.user, cursor=cursor)
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
    person = selectors.person_named(username)
    try:
        created = services.follow(follower=request.user, followee=person)
    except SelfRelationError as refused:
        messages.error(request, refused.message)
    except BlockedError:
        messages.error(
            request, f"You cannot follow @{person.username}: one of you blocks the other."
        )
    else:
        if created:
            messages.success(request, f"You now follow @{person.username}.")
        elif services.is_requested(requester_id=request.user.pk, user_id=person.pk):
            messages.info(
                request, f"@{person.username} approves followers: your request is waiting."
            )
        else:
            messages.info(request, f"You already follow @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def unfollow(request: HttpRequest, username: str) -> HttpResponse:
    person = selectors.person_named(username)
    if services.unfollow(follower=request.user, followee=person):
        messages.success(request, f"You no longer follow @{person.username}.")
    else:
        messages.info(request, f"You did not follow @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def follow_options(request: HttpRequest, username: str) -> HttpResponse:
    """The options of your follow: ``hide_reposts``, ``notify_posts`` (checkboxes)."""
    person = selectors.person_named(username)
    changed = services.set_follow_options(
        follower=request.user,
        followee=person,
        hide_reposts=bool(request.POST.get("hide_reposts")),
        notify_posts=bool(request.POST.get("notify_posts")),
    )
    if changed:
        messages.success(request, f"Saved your options for @{person.username}.")
    else:
        messages.info(request, f"You do not follow @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def block(request: HttpRequest, username: str) -> HttpResponse:
    person = selectors.person_named(username)
    try:
        done = services.block(user=request.user, target=person)
    except SelfRelationError as refused:
        messages.error(request, refused.message)
    else:
        if done:
            messages.success(
                request, f"You blocked @{person.username}. Neither of you follows the other now."
            )
        else:
            messages.info(request, f"You already block @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def unblock(request: HttpRequest, username: str) -> HttpResponse:
    person = selectors.person_named(username)
    if services.unblock(user=request.user, target=person):
        messages.success(request, f"You unblocked @{person.username}.")
    else:
        messages.info(request, f"You did not block @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def mute(request: HttpRequest, username: str) -> HttpResponse:
    person = selectors.person_named(username)
    try:
        done = services.mute(user=request.user, target=person)
    except SelfRelationError as refused:
        messages.error(request, refused.message)
    else:
        if done:
            messages.success(request, f"You muted @{person.username}: their posts leave your feed.")
        else:
            messages.info(request, f"You already mute @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def unmute(request: HttpRequest, username: str) -> HttpResponse:
    person = selectors.person_named(username)
    if services.unmute(user=request.user, target=person):
        messages.success(request, f"You unmuted @{person.username}.")
    else:
        messages.info(request, f"You did not mute @{person.username}.")
    return _redirect_back(request, person)
