"""What posting and editing a status take besides the site's form: the images named
by id (``posts.uploads``), the quoted post (``posts.services.quotable``, as the
compose box's quote), Mastodon's ``Idempotency-Key``, and an edit through the
site's edit form (``posts.forms.EditForm``, ``posts.edits``).

An ``Idempotency-Key`` makes a retried post (a client that lost the answer) the
same post: the key's first status is kept an hour in the site's cache, by user
and key, set only once the post is made. A lock taken with ``cache.add`` (atomic
in Redis) makes a second request with the key wait for the first and answer its
status, so two at once never both post. A cache that cannot be reached posts
without the key, as the rest of the site carries on without its cache.
"""

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.cache import cache
from django.forms import Form
from django.http import HttpRequest, QueryDict
from ninja import Schema

from api.errors import Unprocessable
from feed_project.images import Refused
from feed_project.refusals import Invalid
from posts import edits, selectors, services, uploads
from posts.forms import EditForm
from posts.media import media_by_post
from posts.models import Post

IDEMPOTENT_FOR_SECONDS = 60 * 60  # as Mastodon keeps its keys
# Past this a lock's holder is taken to have died (a post takes well under a second).
LOCK_SECONDS = 30
WAIT_SECONDS = 10.0
POLL_SECONDS = 0.05
IN_PROGRESS = "A request with this Idempotency-Key is still being processed: try again."


@contextmanager
def as_field(field: str) -> Iterator[None]:
    """A refusal of the image pipeline as Mastodon's 422, naming the field at fault."""
    try:
        yield
    except Refused as refused:
        raise Unprocessable(
            f"Validation failed: {refused.message}", {field: [refused.message]}
        ) from None


def refusal_of(form: Form) -> Unprocessable:
    """The site's form errors as a 422 with each field's (the text is Mastodon's ``status``)."""
    details = {
        "status" if field == "text" else field: [str(message) for message in messages]
        for field, messages in form.errors.items()
    }
    summary = "; ".join(message for messages in details.values() for message in messages)
    return Unprocessable(f"Validation failed: {summary}", details)


def _idempotency_name(request: HttpRequest, key: str) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    return f"api:idempotency:{request.user.pk}:{digest}"


def once(request: HttpRequest, make: Callable[[], Post]) -> Post:
    """``make()``, or the post an earlier request with this user's ``Idempotency-Key`` made."""
    key = request.headers.get("Idempotency-Key")
    if not key:
        return make()
    name = _idempotency_name(request, key)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        made = cache.get(name)
        if made is not None:
            return selectors.visible_post(viewer_id=request.user.pk, post_id=made)
        locked = cache.add(f"{name}:lock", 1, timeout=LOCK_SECONDS)
        if locked is None:  # the cache is unreachable (its errors are ignored): no key
            return make()
        if locked:
            try:
                post = make()
                cache.set(name, post.pk, timeout=IDEMPOTENT_FOR_SECONDS)
                return post
            finally:
                cache.delete(f"{name}:lock")
        if time.monotonic() > deadline:
            raise Invalid(IN_PROGRESS)
        time.sleep(POLL_SECONDS)


def quoted(viewer_id: int, status_id: str | int | None, post_id_of: Callable) -> Post | None:
    """The post ``quoted_status_id`` names, if the viewer may quote it (the service's
    refusal otherwise: NotFound, or NotShareable for a followers-only or direct post)."""
    if not status_id:
        return None
    post_id = post_id_of(str(status_id), missing=services.NO_QUOTE)
    return services.quotable(viewer_id=viewer_id, post_id=post_id)


def upload_ids(author_id: int, media_ids: list[str | int] | None) -> list[int]:
    """The author's uploads a new status names (``posts.uploads.attachable``)."""
    if not media_ids:
        return []
    with as_field("media_ids"):
        return uploads.attachable(author_id=author_id, media_ids=media_ids)


class MediaAttribute(Schema):
    """A posted image's new description, in an edit (``focus`` and a thumbnail ignored)."""

    id: str | int
    description: str | None = None
    focus: str | None = None


class StatusEdit(Schema):
    """What an edit may send; as the site's edit form, the visibility stays, and the
    images stay (their descriptions may change). ``sensitive`` and ``language`` are
    accepted and ignored: a content warning is the site's only way to hide a post."""

    status: str | None = None
    spoiler_text: str | None = None
    sensitive: bool | None = None
    language: str | None = None
    media_ids: list[str | int] | None = None
    media_attributes: list[MediaAttribute] | None = None


def edit(*, user_id: int, post_id: str, body: StatusEdit) -> Post:
    """Edit the user's post through the site's edit form and ``posts.edits``."""
    post = edits.editable_post(user_id=user_id, post_id=post_id)
    images = media_by_post([post]).get(post.pk, [])
    descriptions = {str(item.id): item.description for item in body.media_attributes or []}
    with as_field("media_ids"):
        alt_texts = uploads.alt_texts_of_edit(images, body.media_ids, descriptions)
    data = QueryDict(mutable=True)
    data["text"] = post.text if body.status is None else body.status
    data["spoiler_text"] = body.spoiler_text or ""
    if images:
        data.setlist("media_alt", alt_texts)
    form = EditForm(data, images=len(images))
    if not form.is_valid():
        raise refusal_of(form)
    changes = dict(form.cleaned_data)
    edits.edit_post(post=post, changes=changes, alt_texts=changes.pop("alt_texts"))
    return post
