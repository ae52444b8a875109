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
from api import entities, schemas, status_actions
from api.auth import Token
from api.errors import RateLimited, Unprocessable
from api.status_lookup import NOT_FOUND, UNVERIFIED, one, post_id_of, viewer_id
from feed_project.ratelimits import retry_after
from feed_project.refusals import Forbidden
from posts import selectors, services
from posts.forms import PostForm

router = Router(tags=["statuses"])
router.add_router("", status_actions.router)


class NewStatus(Schema):
    """What a client may send; null is as absent, as on Mastodon."""

    status: str | None = None
    in_reply_to_id: str | int | None = None  # a string, as Mastodon sends; a number too
    spoiler_text: str | None = None
    visibility: str | None = None
    sensitive: bool | None = None
    media_ids: list[str] | None = None
    language: str | None = None


def _checked(body: NewStatus) -> dict[str, Any]:
    """The site's form over the request, its errors as a 422 with each field's."""
    if body.media_ids:
        raise Unprocessable("Validation failed: media", {"media_ids": ["Not supported yet."]})
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
    form = PostForm(data)
    if not form.is_valid():
        details = {
            "status" if field == "text" else field: [str(message) for message in messages]
            for field, messages in form.errors.items()
        }
        summary = "; ".join(message for messages in details.values() for message in messages)
        raise Unprocessable(f"Validation failed: {summary}", details)
    return form.cleaned_data


@router.post("/v1/statuses", auth=Token("write:statuses"), response=schemas.Status)
def create(request: HttpRequest, body: NewStatus) -> dict[str, Any]:
    if not may_post(request.user):  # the compose box's rule (accounts.decorators)
        raise Forbidden(UNVERIFIED)
    wait = retry_after(request, "post")  # limited as the site's compose box is
    if wait is not None:
        raise RateLimited(wait)
    cleaned = _checked(body)
    parent = None
    if body.in_reply_to_id:
        parent = selectors.original_to_act_on(
            viewer_id=request.user.pk, post_id=post_id_of(str(body.in_reply_to_id))
        )
    created = services.create_post(
        author=request.user,
        text=cleaned["text"],
        in_reply_to=parent,
        spoiler_text=cleaned["spoiler_text"],
        visibility=cleaned["visibility"],
    )
    return one(request, created)


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
