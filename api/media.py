"""``/api/v2/media`` and ``/api/v1/media/:id``: images uploaded before the status that
carries them.

Mastodon's clients upload each image first and then post naming them
(``media_ids``); the site's compose box sends them with the post. Both go through
the same pipeline (``posts.media.prepare``: the site's formats, bytes and pixels,
re-encoded without metadata); an upload waits as ``posts.uploads`` keeps it
until a post takes it. Processing is synchronous, so the answer is 200 with the
URLs at once (Mastodon's 202 with a null ``url`` is for media still processing).
An image's description is its alt text: an upload's changes in place, a posted
image's as an edit of its post (``posts.edits``), by its author only.
"""

from typing import Any

from django.http import HttpRequest
from ninja import File, Form, Router, Schema
from ninja.files import UploadedFile

from accounts.addresses import may_post
from api import entities, schemas
from api.auth import Token
from api.compose import as_field
from api.errors import RateLimited
from feed_project.ratelimits import retry_after
from feed_project.refusals import Forbidden
from posts import media, uploads
from posts.models import Post, PostMedia

router = Router(tags=["media"])
UNVERIFIED = "Confirm your e-mail address first: the link is in the mail we sent."


class MediaChange(Schema):
    """What ``PUT /api/v1/media/:id`` takes; ``focus`` is accepted and ignored (the site
    crops no thumbnail)."""

    description: str | None = None
    focus: str | None = None


def attachment(request: HttpRequest, item: PostMedia) -> dict[str, Any]:
    """An image as Mastodon's MediaAttachment: a post's at the post's image URLs, an
    upload at the URLs only its uploader was given (``posts.uploads``)."""
    link = entities.Links(request)
    shown = entities._attachment(Post(id=item.post_id or ""), item, link)
    if item.post_id is None:
        shown["url"] = link.base + uploads.upload_path(item)
        shown["preview_url"] = link.base + uploads.upload_path(item, thumbnail=True)
    return shown


@router.post(
    "/v2/media",
    auth=Token("write:media"),
    response=schemas.MediaAttachment,
    operation_id="api_media_upload",
)
@router.post(
    "/v1/media",
    auth=Token("write:media"),
    response=schemas.MediaAttachment,
    operation_id="api_media_upload_v1",
)
def upload(
    request: HttpRequest,
    file: File[UploadedFile],
    description: Form[str | None] = None,
    focus: Form[str | None] = None,
) -> dict[str, Any]:
    """Upload an image (multipart ``file``), with its ``description`` (alt text)."""
    if not may_post(request.user):  # the compose box's rule (accounts.decorators)
        raise Forbidden(UNVERIFIED)
    with as_field("description"):
        alt = uploads.alt_text_of(description)
    with as_field("file"):
        image = media.prepare(file, alt_text=alt, label="The file")
    return attachment(request, uploads.upload(author_id=request.user.pk, image=image))


@router.get("/v1/media/{media_id}", auth=Token("write:media"), response=schemas.MediaAttachment)
def read(request: HttpRequest, media_id: str) -> dict[str, Any]:
    """One of one's own images; anyone else's is a 404."""
    return attachment(request, uploads.own_media(author_id=request.user.pk, media_id=media_id))


@router.put("/v1/media/{media_id}", auth=Token("write:media"), response=schemas.MediaAttachment)
def describe(request: HttpRequest, media_id: str, body: MediaChange) -> dict[str, Any]:
    """Change one's image's description; a posted image's is an edit of its post."""
    item = uploads.own_media(author_id=request.user.pk, media_id=media_id)
    if item.post_id is not None:  # an edit of the post: the edit page's rules
        if not may_post(request.user):
            raise Forbidden(UNVERIFIED)
        wait = retry_after(request, "post")
        if wait is not None:
            raise RateLimited(wait)
    if body.description is None:
        return attachment(request, item)
    with as_field("description"):
        item = uploads.describe(user_id=request.user.pk, item=item, description=body.description)
    return attachment(request, item)
