"""``/api/v1/accounts/...``: who is signed in, a person, and a person's posts.

A person is found the way their profile page finds them
(``relations.selectors.profile_person``: an account being deleted is gone), and
their posts are the profile's (``posts.selectors.author_posts_page``), with the
profile's rule that people blocked either way see none of each other's.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from accounts.models import User
from api import entities, schemas
from api.auth import Token
from api.paging import PageQuery, link_header
from feed_project.pagination import Cursor, Page
from feed_project.refusals import NotFound
from posts import ids
from posts.selectors import author_posts_page
from relations.selectors import profile_person

router = Router(tags=["accounts"])
NO_SUCH_ACCOUNT = "Record not found"


def person(request: HttpRequest, account_id: str) -> User:
    """The account of a decimal user id as its profile page would show it; else 404."""
    if not account_id.isascii() or not account_id.isdigit() or len(account_id) > 18:
        raise NotFound(NO_SUCH_ACCOUNT)
    username = User.objects.filter(pk=int(account_id)).values_list("username", flat=True).first()
    if not username:
        raise NotFound(NO_SUCH_ACCOUNT)
    return profile_person(username=username, viewer=request.user)


@router.get(
    "/v1/accounts/verify_credentials",
    auth=Token("read:accounts"),
    response=schemas.CredentialAccount,
)
def verify_credentials(request: HttpRequest) -> dict[str, Any]:
    return entities.credential_account(request.user, entities.Links(request))


@router.get(
    "/v1/accounts/{account_id}",
    auth=Token("read:accounts", optional=True),
    response=schemas.Account,
)
def account(request: HttpRequest, account_id: str) -> dict[str, Any]:
    return entities.account(person(request, account_id), entities.Links(request))


def _author_cursor(query: PageQuery, author_id: int) -> Cursor:
    """The page's cursor in this author's post ids, which the profile pages by."""
    keys = query.cursor()
    return Cursor(
        before=ids.author_bound_below(keys.before, author_id) if keys.before else None,
        after=ids.author_bound_above(keys.after, author_id) if keys.after else None,
    )


@router.get(
    "/v1/accounts/{account_id}/statuses",
    auth=Token("read:statuses", optional=True),
    response=list[schemas.Status],
)
def account_statuses(
    request: HttpRequest,
    response: HttpResponse,
    account_id: str,
    query: Query[PageQuery],
    pinned: bool = False,
) -> list[dict[str, Any]]:
    author = person(request, account_id)
    viewer = request.user
    others = viewer.is_authenticated and viewer.pk != author.pk
    if pinned or (others and (author.viewer_blocks or author.blocks_viewer)):
        return []  # nothing is pinned; blocked either way, neither sees the other's posts
    page: Page = author_posts_page(
        author=author,
        cursor=_author_cursor(query, author.pk),
        limit=query.size,
        viewer_id=viewer.pk if viewer.is_authenticated else None,
    )
    items = query.keep(page.items, lambda post: post.timeline_key)
    entries = [(post.timeline_key, post.repost_of if post.repost_of_id else post) for post in items]
    shown = entities.statuses(request, entries)
    first = ids.decimal_of_key(items[0].timeline_key) if items else None
    last = ids.decimal_of_key(items[-1].timeline_key) if items else None
    link_header(request, response, first, last, more=page.older is not None)
    return shown
