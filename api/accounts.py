"""``/api/v1/accounts/...``: who is signed in, a person, their posts and follow lists;
finding people by name, and editing one's own profile.

A person is found the way their profile page finds them
(``relations.selectors.profile_person``: an account being deleted is gone), and
their posts are the profile's (``posts.selectors.author_posts_page``), with the
profile's rule that people blocked either way see none of each other's. Their
followers and follows are the profile's lists (``relations.selectors``), paged
by the lists' own cursors (``api.relation_paging``); search is the site's
people search (``posts.search.search_people``) and the profile is edited
through the settings page's form (``accounts.forms.ProfileForm``) and services.

An account id in a path is decimal digits (the ``account_id`` converter): so
``/v1/accounts/relationships`` and the other fixed names are never taken for
an id, whichever router holds them.
"""

import json
import re
from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import register_converter
from django.utils.datastructures import MultiValueDict
from ninja import Query, Router

from accounts import avatar_upload
from accounts import services as account_services
from accounts.converters import UsernameConverter
from accounts.forms import ProfileForm
from accounts.models import User
from api import entities, schemas
from api.auth import Token
from api.errors import Unprocessable
from api.paging import PageQuery, link_header
from api.relation_paging import RelationPageQuery, answer
from feed_project.pagination import Cursor, Page
from feed_project.refusals import NotFound
from posts import ids
from posts.search import normalize_query, search_people
from posts.selectors import author_posts_page
from relations.selectors import followers_page, following_page, profile_person


class AccountIdConverter:
    """A user id in a path: decimal digits, kept as text (``person`` checks its size)."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(AccountIdConverter, "account_id")

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
    "/v1/accounts/{account_id:account_id}",
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
    "/v1/accounts/{account_id:account_id}/statuses",
    auth=Token("read:statuses", optional=True),
    response=list[schemas.Status],
)
def account_statuses(
    request: HttpRequest,
    response: HttpResponse,
    account_id: str,
    query: Query[PageQuery],
    pinned: bool = False,
    exclude_replies: bool = False,
    exclude_reblogs: bool = False,
    only_media: bool = False,
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
        exclude_replies=exclude_replies,
        exclude_reposts=exclude_reblogs,
        only_media=only_media,
    )
    items = query.keep(page.items, lambda post: post.timeline_key)
    entries = [(post.timeline_key, post.repost_of if post.repost_of_id else post) for post in items]
    shown = entities.statuses(request, entries)
    first = ids.decimal_of_key(items[0].timeline_key) if items else None
    last = ids.decimal_of_key(items[-1].timeline_key) if items else None
    link_header(request, response, first, last, more=page.older is not None)
    return shown


def _relation_list(
    request: HttpRequest, response: HttpResponse, account_id: str, query: RelationPageQuery, read
) -> list[dict[str, Any]]:
    """A profile's followers or following page (``relations.views``), newest follow first;
    people blocked either way with the viewer are not listed (the selector's rule)."""
    owner = person(request, account_id)
    viewer = request.user if request.user.is_authenticated else None
    page = read(user=owner, viewer=viewer, cursor=query.cursor(), limit=query.size)
    link = entities.Links(request)
    return [entities.account(user, link) for user in answer(request, response, query, page)]


@router.get(
    "/v1/accounts/{account_id:account_id}/followers",
    auth=Token("read:accounts", optional=True),
    response=list[schemas.Account],
)
def followers(
    request: HttpRequest, response: HttpResponse, account_id: str, query: Query[RelationPageQuery]
) -> list[dict[str, Any]]:
    return _relation_list(request, response, account_id, query, followers_page)


@router.get(
    "/v1/accounts/{account_id:account_id}/following",
    auth=Token("read:accounts", optional=True),
    response=list[schemas.Account],
)
def following(
    request: HttpRequest, response: HttpResponse, account_id: str, query: Query[RelationPageQuery]
) -> list[dict[str, Any]]:
    return _relation_list(request, response, account_id, query, following_page)


_USERNAME = re.compile(UsernameConverter.regex)


@router.get(
    "/v1/accounts/lookup",
    auth=Token("read:accounts", optional=True),
    response=schemas.Account,
)
def lookup(request: HttpRequest, acct: str) -> dict[str, Any]:
    """A person by ``name``, ``@name`` or ``name@thishost``, as their profile finds them."""
    name, _, host = acct.strip().removeprefix("@").partition("@")
    if host and host.lower() != request.get_host().lower():
        raise NotFound(NO_SUCH_ACCOUNT)  # every account here is local
    if len(name) > User._meta.get_field("username").max_length or not _USERNAME.fullmatch(name):
        raise NotFound(NO_SUCH_ACCOUNT)
    return entities.account(
        profile_person(username=name, viewer=request.user), entities.Links(request)
    )


SEARCH_LIMIT = 40
SEARCH_MAX = 80


@router.get(
    "/v1/accounts/search",
    auth=Token("read:accounts"),
    response=list[schemas.Account],
)
def search(
    request: HttpRequest,
    q: str,
    limit: int = SEARCH_LIMIT,
    offset: int = 0,
    resolve_remote: bool = Query(False, alias="resolve"),
    following: bool = False,
) -> list[dict[str, Any]]:
    """The site's people search: its best matches only, so a later ``offset`` is empty
    (every account is local: ``resolve`` finds no one more)."""
    query = normalize_query(q)
    if not query or offset > 0:
        return []
    people = search_people(
        query=query,
        viewer=request.user,
        limit=max(1, min(limit, SEARCH_MAX)),
        followed_only=following,
    )
    link = entities.Links(request)
    return [entities.account(user, link) for user in people]


# Mastodon's booleans as a form sends them; anything else is false.
TRUE = {"1", "true", "on", "yes"}
PROFILE_BODY = {
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    "display_name": {"type": "string"},
                    "note": {"type": "string"},
                    "locked": {"type": "boolean"},
                    "avatar": {"type": "string", "format": "binary"},
                },
            }
        },
        "application/x-www-form-urlencoded": {
            "schema": {
                "type": "object",
                "properties": {
                    "display_name": {"type": "string"},
                    "note": {"type": "string"},
                    "locked": {"type": "boolean"},
                },
            }
        },
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "display_name": {"type": "string"},
                    "note": {"type": "string"},
                    "locked": {"type": "boolean"},
                },
            }
        },
    }
}


def _sent(request: HttpRequest) -> tuple[dict[str, Any], MultiValueDict]:
    """The fields and files of a PATCH, which Django parses for POST only."""
    if request.content_type == "application/json":
        try:
            data = json.loads(request.body or b"{}")
        except ValueError:
            raise Unprocessable("Validation failed: body", {"body": ["Not JSON."]}) from None
        if not isinstance(data, dict):
            raise Unprocessable("Validation failed: body", {"body": ["Not an object."]})
        return data, MultiValueDict()
    if request.method != "POST":
        method = request.method
        for loaded in ("_post", "_files"):
            if hasattr(request, loaded):
                delattr(request, loaded)
        request.method = "POST"
        try:
            request._load_post_and_files()
        finally:
            request.method = method
    return {key: request.POST.get(key) for key in request.POST}, request.FILES


def _as_bool(value: object) -> bool:
    return value is True or str(value).strip().lower() in TRUE


@router.patch(
    "/v1/accounts/update_credentials",
    auth=Token("write:accounts"),
    response=schemas.CredentialAccount,
    openapi_extra={"requestBody": PROFILE_BODY},
)
def update_credentials(request: HttpRequest) -> dict[str, Any]:
    """The settings page's profile form over what was sent (what was not keeps its value):
    ``display_name``, ``note``, ``locked``, ``avatar``; its errors a 422 by field."""
    user: User = request.user
    data, files = _sent(request)
    form_data = QueryDict(mutable=True)
    form_data.update(
        {
            "display_name": str(data.get("display_name", user.display_name) or ""),
            "bio": str(data.get("note", user.bio) or ""),
            "time_zone": user.time_zone,
        }
    )
    if _as_bool(data["locked"]) if "locked" in data else user.locked:
        form_data["locked"] = "on"
    form = ProfileForm(form_data, MultiValueDict({"avatar": files.getlist("avatar")}))
    if not form.is_valid():
        details = {
            "note" if field == "bio" else field: [str(message) for message in messages]
            for field, messages in form.errors.items()
        }
        summary = "; ".join(message for messages in details.values() for message in messages)
        raise Unprocessable(f"Validation failed: {summary}", details)
    cleaned = form.cleaned_data
    account_services.update_profile(
        user=user,
        display_name=cleaned["display_name"],
        bio=cleaned["bio"],
        locked=cleaned["locked"],
    )
    if cleaned["avatar"] is not None:
        avatar_upload.replace(user=user, picture=cleaned["avatar"])
    return entities.credential_account(user, entities.Links(request))
