"""``/@<username>/``: a person, where the viewer stands with them, and their posts."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.pagination import Cursor, Page
from posts import ids
from posts.selectors import author_posts_page, profile_entries, viewer_marks
from relations.selectors import profile_person


@require_safe
def profile(request: HttpRequest, username: str) -> HttpResponse:
    viewer = request.user
    person = profile_person(username=username, viewer=viewer)
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    others = viewer.is_authenticated and viewer.pk != person.pk
    blocking = others and person.viewer_blocks
    blocked_by = others and person.blocks_viewer
    if blocking or blocked_by:
        # Neither side sees the other's posts: the page says so instead.
        page: Page = Page(items=[])
    else:
        page = author_posts_page(
            author=person,
            cursor=cursor,
            viewer_id=viewer.pk if viewer.is_authenticated else None,
        )
    entries = profile_entries(page.items, owner=person)
    context = {
        "person": person,
        "page": page,
        "entries": entries,
        "can_follow": others,
        "following": others and person.viewer_follows,
        "requested": others and person.viewer_requested,
        "blocking": blocking,
        "blocked_by": blocked_by,
        "muting": others and person.viewer_mutes,
        **viewer_marks(viewer, [entry.post for entry in entries]),
    }
    return render(request, "relations/profile.html", context)
