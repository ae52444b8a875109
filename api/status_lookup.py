"""How a status id names a post and a post becomes one status: what every status
endpoint (``api.statuses``, ``api.status_actions``) starts and ends with."""

from typing import Any

from django.http import HttpRequest

from api import entities
from feed_project.refusals import NotFound
from posts import ids, selectors
from posts.models import Post

NOT_FOUND = "Record not found"
UNVERIFIED = "Confirm your e-mail address first: the link is in the mail we sent."


def post_id_of(status_id: str, missing: str = NOT_FOUND) -> str:
    """The post id a status id names; NotFound for anything that is no status id."""
    try:
        return ids.timeline_key_to_post_id(ids.key_of_decimal(status_id))
    except ids.InvalidKey:
        raise NotFound(missing) from None


def viewer_id(request: HttpRequest) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


def one(request: HttpRequest, post: Post) -> dict[str, Any]:
    """A post as a status: a repost wraps its original."""
    shown = post
    if post.repost_of_id:
        shown = selectors.original_to_act_on(
            viewer_id=viewer_id(request), post_id=post.repost_of_id
        )
    found = entities.statuses(request, [(post.timeline_key, shown)])
    if not found:
        raise NotFound(NOT_FOUND)
    return found[0]
