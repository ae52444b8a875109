"""``/api/v1/timelines/...``: the home feed, the public timeline and a tag's; and
``/api/v1/tags/:name``, the tag itself (which nobody can follow yet: following one
is a 422).

The home feed is the site's (``timelines.home.home_feed``: the inbox, big
accounts pulled in, and pull past the inbox's cap, so a client pages back to
the first post); an entry whose key is a repost's answers as a reblog. The
public timeline is ``/public/``'s page (``posts.public_timeline.public_page``):
every post here is local, so ``local`` changes nothing.

A tag's timeline is its page (``/tags/<tag>/``: ``posts.tags.tag_page``): its
public posts the viewer may see, less their muted words. ``any[]`` merges the
pages of more tags (each one range of the tag index, newest first); ``all[]``
and ``none[]`` keep a page's posts carrying, or not carrying, other tags, and
``only_media`` those with images: such a page may hold fewer than ``limit``
while its ``Link`` still goes on from where the scan stopped.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema

from api import entities, hashtags, schemas
from api.auth import Token
from api.paging import PageQuery, link_header
from feed_project.pagination import Cursor, Page
from feed_project.refusals import Invalid, NotFound
from posts import ids, tags
from posts.media import media_by_post
from posts.models import Post
from posts.public_timeline import public_page
from timelines.home import home_feed

router = Router(tags=["timelines"])
NOT_A_TAG = "Record not found"
NO_TAG_FOLLOWS = "Following a tag is not possible on this site yet."
TAGS_PER_MODE = 4  # Mastodon's most tags in each of any[], all[] and none[]


def _answer(
    request: HttpRequest, response: HttpResponse, entries: list, more: bool
) -> list[dict[str, Any]]:
    first = ids.decimal_of_key(entries[0][0]) if entries else None
    last = ids.decimal_of_key(entries[-1][0]) if entries else None
    link_header(request, response, first, last, more=more)
    return entities.statuses(request, entries)


@router.get("/v1/timelines/home", auth=Token("read:statuses"), response=list[schemas.Status])
def home(request: HttpRequest, response: HttpResponse, query: Query[PageQuery]) -> list:
    page = home_feed(reader=request.user, cursor=query.cursor(), limit=query.size)
    items = query.keep(page.items, lambda item: item.key)
    entries = [(item.key, item.post) for item in items]
    return _answer(request, response, entries, more=page.older is not None)


@router.get(
    "/v1/timelines/public",
    auth=Token("read:statuses", optional=True),
    response=list[schemas.Status],
)
def public(
    request: HttpRequest, response: HttpResponse, query: Query[PageQuery], local: bool = False
) -> list:
    viewer_id = request.user.pk if request.user.is_authenticated else None
    page = public_page(viewer_id=viewer_id, cursor=query.cursor(), limit=query.size)
    posts = query.keep(page.items, lambda post: post.timeline_key)
    entries = [(post.timeline_key, post) for post in posts]
    return _answer(request, response, entries, more=page.older is not None)


class TagQuery(Schema):
    """A tag timeline's other tags (``any[]``, ``all[]``, ``none[]``) and Mastodon's filters."""

    any: list[str] = Field(default_factory=list, alias="any[]")
    all: list[str] = Field(default_factory=list, alias="all[]")
    none: list[str] = Field(default_factory=list, alias="none[]")
    local: bool = False
    remote: bool = False
    only_media: bool = False


def _tag(name: str) -> str:
    """The stored form of a tag named in a request; NotFound when it is no tag."""
    found = tags.normalize_tag(name)
    if found is None:
        raise NotFound(NOT_A_TAG)
    return found


def _tags(names: list[str]) -> list[str]:
    """The tags of a list of names, those that are tags, the first TAGS_PER_MODE."""
    return [tag for tag in map(tags.normalize_tag, names) if tag][:TAGS_PER_MODE]


def _merged(pages: list[Page], cursor: Cursor, limit: int) -> tuple[list[Post], bool]:
    """Tag pages of one cursor as one page: each newest first from the same bound, so
    the newest ``limit`` of them all (the oldest, going up from ``min_id``) are the page."""
    posts = {post.pk: post for page in pages for post in page.items}
    newest_first = sorted(posts.values(), key=lambda post: post.timeline_key, reverse=True)
    if cursor.newer_pages:
        return newest_first[-limit:], False
    more = len(newest_first) > limit or any(page.older is not None for page in pages)
    return newest_first[:limit], more


@router.get(
    "/v1/timelines/tag/{hashtag}",
    auth=Token("read:statuses", optional=True),
    response=list[schemas.Status],
)
def tag_timeline(
    request: HttpRequest,
    response: HttpResponse,
    hashtag: str,
    query: Query[PageQuery],
    other: Query[TagQuery],
) -> list:
    wanted = [_tag(hashtag), *_tags(other.any)]
    needed, unwanted = set(_tags(other.all)), set(_tags(other.none))
    if other.remote:
        return []  # every post here is local
    viewer_id = request.user.pk if request.user.is_authenticated else None
    cursor = query.cursor()
    pages = [
        tags.tag_page(tag=tag, viewer_id=viewer_id, cursor=cursor, limit=query.size)
        for tag in dict.fromkeys(wanted)
    ]
    posts, more = _merged(pages, cursor, query.size)
    posts = query.keep(posts, lambda post: post.timeline_key)
    if posts:  # the links go on from the scan's ends, whatever the filters keep
        first, last = (ids.decimal_of_key(post.timeline_key) for post in (posts[0], posts[-1]))
        link_header(request, response, first, last, more=more)
    kept = [post for post in posts if _carries(post, needed, unwanted)]
    if other.only_media:
        with_media = media_by_post(kept)
        kept = [post for post in kept if with_media.get(post.pk)]
    return entities.statuses(request, [(post.timeline_key, post) for post in kept])


def _carries(post: Post, needed: set[str], unwanted: set[str]) -> bool:
    """Whether a post carries every tag ``needed`` and none ``unwanted``."""
    if not needed and not unwanted:
        return True
    carried = set(tags.hashtags(post.text))
    return needed <= carried and not unwanted & carried


@router.get("/v1/tags/{name}", auth=Token("read:statuses", optional=True), response=hashtags.Tag)
def tag(request: HttpRequest, name: str) -> dict[str, Any]:
    return hashtags.tags([_tag(name)], entities.Links(request))[0]


@router.post("/v1/tags/{name}/follow", auth=Token("write:follows"), response=hashtags.Tag)
def follow_tag(request: HttpRequest, name: str) -> dict[str, Any]:
    _tag(name)
    raise Invalid(NO_TAG_FOLLOWS)


@router.post("/v1/tags/{name}/unfollow", auth=Token("write:follows"), response=hashtags.Tag)
def unfollow_tag(request: HttpRequest, name: str) -> dict[str, Any]:
    """Nobody follows a tag here, so unfollowing one leaves it unfollowed, as asked."""
    return hashtags.tags([_tag(name)], entities.Links(request))[0]
