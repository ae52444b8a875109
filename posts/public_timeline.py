"""``/public/``: everyone's recent public posts, newest first, signed out too.

A range scan of the timeline key (``post_public_idx``: public posts that are
not reposts, by timeline key), keyset-paginated like every list. Hidden posts
(moderation, suspension, a deletion's grace) and deleted ones are not live;
for a signed-in reader, people blocked either way, people they muted and
posts with their muted words are left out too, inside the scan, so a page is
full while posts remain. Unlisted, followers-only and direct posts never show
here (``posts.visibility.listed``).
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from feed_project.pagination import Cursor, Page, keyset_page
from posts import ids
from posts.models import Post
from posts.selectors import viewer_marks
from posts.visibility import listed, visible_to, without_muted_words
from relations import visibility as relations_visibility


def public_page(*, viewer_id: int | None, cursor: Cursor, limit: int | None = None) -> Page[Post]:
    """One page of the public timeline, with the authors: one query."""
    posts = Post.objects.visible().filter(listed(), repost_of__isnull=True)
    if viewer_id is not None:
        posts = visible_to(posts, viewer_id).exclude(
            relations_visibility.muted(viewer_id, "author_id")
        )
        posts = without_muted_words(posts, viewer_id)
    posts = posts.select_related("author")
    limit = limit or settings.FEED_PAGE_SIZE
    return keyset_page(posts, field="timeline_key", cursor=cursor, limit=limit)


@require_safe
def public_timeline(request: HttpRequest) -> HttpResponse:
    viewer_id = request.user.pk if request.user.is_authenticated else None
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    page = public_page(viewer_id=viewer_id, cursor=cursor)
    context = {"page": page, **viewer_marks(request.user, page.items)}
    return render(request, "posts/public.html", context)
