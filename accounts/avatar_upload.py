"""Uploaded pictures: checked like post images (feed_project.images), cropped to a
square, resized, re-encoded as WebP with no metadata, and kept in the same
storage as post images (``storages["default"]``) under a random name.

A new picture gets a new name, so its URL never changes meaning and browsers
may keep it for good; the old file is deleted once the new name is saved.
Pictures are public, like the profile they belong to: ``serve`` answers
anyone, with no query (the name is the key). ``serve_png`` answers the same
picture as a PNG, for clients that take no WebP (Mastodon's ``avatar_static``).
"""

import io
import re
import secrets

from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, storages
from django.core.files.uploadedfile import UploadedFile
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe
from PIL import Image, ImageOps

from accounts.models import User
from feed_project import images

SIZE = 256  # pixels a side: a 48-pixel picture on a 3x screen, and the 96 of a profile, sharp
PREFIX = "avatars"
# secrets.token_urlsafe, and the "_xxxxxxx" a storage may add to a name taken.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def prepare(upload: UploadedFile) -> bytes:
    """The picture as stored: ``images.Refused`` when it is not an image we take."""
    frame = images.first_frame(upload, label="The picture")
    if frame.mode not in ("RGB", "RGBA"):
        frame = frame.convert(
            "RGBA" if "A" in frame.mode or "transparency" in frame.info else "RGB"
        )
    square = ImageOps.fit(frame, (SIZE, SIZE))
    square.info = {}  # pixels only: no EXIF, GPS, XMP or ICC goes out
    out = io.BytesIO()
    square.save(out, "WEBP", quality=85)
    return out.getvalue()


def replace(*, user: User, picture: bytes | None) -> str:
    """Store ``picture`` as the user's (None: back to the generated one); the new name."""
    storage = storages["default"]
    old = user.avatar
    name = ""
    if picture is not None:
        token = secrets.token_urlsafe(12)
        name = storage.save(f"{PREFIX}/{user.pk}/{token}.webp", ContentFile(picture))
    User.objects.filter(pk=user.pk).update(avatar=name)
    user.avatar = name
    if old:
        storage.delete(old)
    return name


def _stored_name(user_id: str, token: str) -> str:
    if not user_id.isdigit() or not _TOKEN.fullmatch(token):  # names this module made only
        raise Http404("No such picture.")
    return f"{PREFIX}/{user_id}/{token}.webp"


@require_safe
def serve(request: HttpRequest, user_id: str, token: str) -> HttpResponse:
    """``/accounts/avatars/<user id>/<token>.webp``: an uploaded picture."""
    name = _stored_name(user_id, token)
    storage = storages["default"]
    if isinstance(storage, FileSystemStorage):
        try:
            response: HttpResponse = FileResponse(storage.open(name), content_type="image/webp")
        except (FileNotFoundError, ValueError) as exc:
            raise Http404("No such picture.") from exc
    else:
        response = HttpResponseRedirect(storage.url(name))
    patch_cache_control(response, public=True, max_age=365 * 24 * 3600, immutable=True)
    return response


@require_safe
def serve_png(request: HttpRequest, user_id: str, token: str) -> HttpResponse:
    """``/accounts/avatars/<user id>/<token>.png``: an uploaded picture as a PNG, drawn from
    the stored one (small, and kept by browsers for good)."""
    name = _stored_name(user_id, token)
    try:
        with storages["default"].open(name) as stored:
            picture = Image.open(stored)
            picture.load()
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise Http404("No such picture.") from exc
    out = io.BytesIO()
    picture.save(out, "PNG")
    response = HttpResponse(out.getvalue(), content_type="image/png")
    patch_cache_control(response, public=True, max_age=365 * 24 * 3600, immutable=True)
    return response
