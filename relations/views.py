"""Profile pages (``/@<username>/...``): the person, their posts, their follow lists."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from accounts.models import User
from feed_project.http import redirect_back
from feed_project.pagination import BadCursor, Cursor, Page
from feed_project.ratelimits import ratelimit
from posts.selectors import author_posts_page, profile_entries, viewer_marks
from relations import selectors, services
from relations.services import BlockedError, SelfFollowError


def _user_or_404(username: str) -> User:
    # Usernames are unique case-insensitively: /@Alice/ is alice's page.
    return get_object_or_404(User, username__iexact=username)


def _cursor(request: HttpRequest) -> Cursor:
    """The ``?before=`` / ``?after=`` cursor; BadCursor when both are given."""
    return Cursor(before=request.GET.get("before"), after=request.GET.get("after"))


def _redirect_back(request: HttpRequest, person: User) -> HttpResponse:
    """To the ``next`` field when it stays on this site, else to the person's profile."""
    return redirect_back(request, reverse("relations:profile", args=[person.username]))


@require_safe
def profile(request: HttpRequest, username: str) -> HttpResponse:
    viewer = request.user
    person = selectors.profile_person(username=username, viewer=viewer)
    if person is None:
        raise Http404("No such person.")
    others = viewer.is_authenticated and viewer.pk != person.pk
    blocking = others and person.viewer_blocks
    blocked_by = others and person.blocks_viewer
    if blocking or blocked_by:
        # Neither side sees the other's posts: the page says so instead.
        page: Page = Page(items=[])
    else:
        try:
            page = author_posts_page(
                author=person,
                cursor=_cursor(request),
                viewer_id=viewer.pk if viewer.is_authenticated else None,
            )
        except BadCursor as exc:
            raise BadRequest(str(exc)) from exc
    entries = profile_entries(page.items, owner=person)
    context = {
        "person": person,
        "page": page,
        "entries": entries,
        "can_follow": others,
        "following": others and person.viewer_follows,
        "blocking": blocking,
        "blocked_by": blocked_by,
        "muting": others and person.viewer_mutes,
        **viewer_marks(viewer, [entry.post for entry in entries]),
    }
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
    except BlockedError:
        messages.error(
            request, f"You cannot follow @{person.username}: one of you blocks the other."
        )
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


@require_POST
@login_required
@ratelimit("follow")
def block(request: HttpRequest, username: str) -> HttpResponse:
    person = _user_or_404(username)
    if person.pk == request.user.pk:
        messages.error(request, "You cannot block yourself.")
    elif services.block(user=request.user, target=person):
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
    person = _user_or_404(username)
    if services.unblock(user=request.user, target=person):
        messages.success(request, f"You unblocked @{person.username}.")
    else:
        messages.info(request, f"You did not block @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def mute(request: HttpRequest, username: str) -> HttpResponse:
    person = _user_or_404(username)
    if person.pk == request.user.pk:
        messages.error(request, "You cannot mute yourself.")
    elif services.mute(user=request.user, target=person):
        messages.success(request, f"You muted @{person.username}: their posts leave your feed.")
    else:
        messages.info(request, f"You already mute @{person.username}.")
    return _redirect_back(request, person)


@require_POST
@login_required
@ratelimit("follow")
def unmute(request: HttpRequest, username: str) -> HttpResponse:
    person = _user_or_404(username)
    if services.unmute(user=request.user, target=person):
        messages.success(request, f"You unmuted @{person.username}.")
    else:
        messages.info(request, f"You did not mute @{person.username}.")
    return _redirect_back(request, person)
