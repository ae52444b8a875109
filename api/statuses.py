"""``/api/v1/statuses``: post, read and delete a status (acting on one and reading its
thread, history and people are ``api.status_actions``, mounted on this router).

Posting goes through the site's compose form (``posts.forms.PostForm``: the same
length rule, links counted as 23) and ``posts.services.create_post``; a reply's
parent is found as the site's reply box finds it
(``posts.selectors.original_to_act_on``), reading one as the detail page does
(``visible_post``), deleting as its delete button does (``delete_own_post``).
"""

from typing import Any

from django.http import HttpRequest, QueryDict
from ninja import Router, Schema

from accounts.addresses import may_post
from api import compose, entities, schemas, status_actions
from api.auth import Token
from api.errors import RateLimited, Unprocessable
from api.status_lookup import NOT_FOUND, UNVERIFIED, one, post_id_of, viewer_id
from feed_project.ratelimits import retry_after
from feed_project.refusals import Forbidden
from posts import selectors, services
from posts.forms import PostForm
from posts.models import Post

router = Router(tags=["statuses"])
router.add_router("", status_actions.router)


class NewStatus(Schema):
    """What a client may send; null is as absent, as on Mastodon."""

    status: str | None = None
    in_reply_to_id: str | int | None = None  # a string, as Mastodon sends; a number too
    spoiler_text: str | None = None
    visibility: str | None = None
    # Accepted and ignored: a content warning is the site's only way to hide a post.
    sensitive: bool | None = None
    media_ids: list[str | int] | None = None  # uploads (api.media), in order
    language: str | None = None  # accepted and ignored: posts have no language
    quoted_status_id: str | int | None = None  # Mastodon 4.5's quote


def _checked(body: NewStatus) -> dict[str, Any]:
    """The site's form over the request, its errors as a 422 with each field's."""
    level = entities.SITE_LEVELS.get(body.visibility or "public")
    if level is None:
        message = "Visibility must be one of public, unlisted, private, direct"
        raise Unprocessable(f"Validation failed: {message}", {"visibility": [message]})
    data = QueryDict(mutable=True)
    data.update(
        {
            "text": body.status or "",
            "spoiler_text": body.spoiler_text or "",
            "visibility": str(level),
        }
    )
    form = PostForm(data, uploads=len(body.media_ids or []))
    if not form.is_valid():
        raise compose.refusal_of(form)
    return form.cleaned_data


@router.post("/v1/statuses", auth=Token("write:statuses"), response=schemas.Status)
def create(request: HttpRequest, body: NewStatus) -> dict[str, Any]:
    """Post; with an ``Idempotency-Key``, a retry answers the first post (``api.compose``)."""
    if not may_post(request.user):  # the compose box's rule (accounts.decorators)
        raise Forbidden(UNVERIFIED)
    return one(request, compose.once(request, lambda: _posted(request, body)))


def _posted(request: HttpRequest, body: NewStatus) -> Post:
    wait = retry_after(request, "post")  # limited as the site's compose box is
    if wait is not None:
        raise RateLimited(wait)
    cleaned = _checked(body)
    parent = None
    if body.in_reply_to_id:
        parent = selectors.original_to_act_on(
            viewer_id=request.user.pk, post_id=post_id_of(str(body.in_reply_to_id))
        )
    quote_of = compose.quoted(request.user.pk, body.quoted_status_id, post_id_of)
    upload_ids = compose.upload_ids(request.user.pk, body.media_ids)
    with compose.as_field("media_ids"):  # another post took an upload meanwhile
        return services.create_post(
            author=request.user,
            text=cleaned["text"],
            in_reply_to=parent,
            quote_of=quote_of,
            spoiler_text=cleaned["spoiler_text"],
            upload_ids=upload_ids,
            visibility=cleaned["visibility"],
        )


@router.put("/v1/statuses/{status_id}", auth=Token("write:statuses"), response=schemas.Status)
def edit(request: HttpRequest, status_id: str, body: compose.StatusEdit) -> dict[str, Any]:
    """Edit one's status as the site's edit page does: its text, content warning and
    images' descriptions; the answer has ``edited_at``."""
    if not may_post(request.user):  # the edit page's rule (accounts.decorators)
        raise Forbidden(UNVERIFIED)
    wait = retry_after(request, "post")  # an edit notifies: limited as the edit page is
    if wait is not None:
        raise RateLimited(wait)
    post = compose.edit(user_id=request.user.pk, post_id=post_id_of(status_id), body=body)
    return one(request, post)


@router.get(
    "/v1/statuses/{status_id}",
    auth=Token("read:statuses", optional=True),
    response=schemas.Status,
)
def read(request: HttpRequest, status_id: str) -> dict[str, Any]:
    post = selectors.visible_post(
        viewer_id=viewer_id(request), post_id=post_id_of(status_id), missing=NOT_FOUND
    )
    return one(request, post)


@router.delete(
    "/v1/statuses/{status_id}", auth=Token("write:statuses"), response=schemas.DeletedStatus
)
def delete(request: HttpRequest, status_id: str) -> dict[str, Any]:
    """Delete one's own status; the answer is the status as it was, with its ``text``
    (Mastodon's "delete and redraft")."""
    post = services.delete_own_post(user=request.user, post_id=post_id_of(status_id))
    shown = one(request, post)
    return {**shown, "text": post.text, "spoiler_text": post.spoiler_text}
