"""Untrusted image uploads, checked by their content: the part post images
(``posts.media``) and avatars (``accounts.avatar_upload``) share.

Here, below every app in the import layers, because ``accounts`` sits below
``posts`` and may not import ``posts.media``: the checks (formats, bytes,
pixels read from the header before a pixel is decoded, decompression bombs
as errors, frames of an animation) are written once. Each caller re-encodes
the pixels its own way, so no metadata (EXIF, GPS, XMP, ICC) is ever kept.
"""

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.files.uploadedfile import UploadedFile
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from feed_project.refusals import Invalid

MAX_BYTES = 10 * 1024 * 1024
MAX_PIXELS = 40_000_000
# Past this many frames an animation costs more to re-encode than it is worth.
MAX_FRAMES = 500
# Pillow format -> (content type, file extension).
FORMATS = {
    "JPEG": ("image/jpeg", "jpg"),
    "PNG": ("image/png", "png"),
    "WEBP": ("image/webp", "webp"),
    "GIF": ("image/gif", "gif"),
}


class Refused(Invalid, ValueError):
    """An upload this site does not take; the message says why, for the form (or, as
    any ``refusals.Invalid``, for another front door's 400)."""


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def frames(image: Image.Image, label: str) -> list[Image.Image]:
    """Every frame, decoded, each checked against the limits before it is decoded."""
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise Refused(
            f"{label} is {width} x {height} pixels: an image is at most "
            f"{MAX_PIXELS // 1_000_000} megapixels."
        )
    if not getattr(image, "is_animated", False):
        image.load()
        return [ImageOps.exif_transpose(image)]
    found = []
    for n, frame in enumerate(ImageSequence.Iterator(image), start=1):
        if n > MAX_FRAMES:
            raise Refused(f"{label} has more than {MAX_FRAMES} frames: at most {MAX_FRAMES}.")
        if n * width * height > MAX_PIXELS:
            raise Refused(
                f"{label} is an animation of more than {n - 1} frames of {width} x {height}: "
                f"at most {MAX_PIXELS // 1_000_000} megapixels in all."
            )
        found.append(frame.copy())
    return found


@contextmanager
def reading(upload: UploadedFile, label: str) -> Iterator[None]:
    """Around the reading of an upload: too many bytes, too many pixels (a
    decompression bomb is an error, not a warning), not an image, or anything
    else the decoders raise become ``Refused`` with the reason for the form."""
    if upload.size is not None and upload.size > MAX_BYTES:
        raise Refused(f"{label} is {megabytes(upload.size)}: an image is at most 10 MB.")
    upload.seek(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            yield
    except Refused:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise Refused(f"{label} has too many pixels to be an image we take.") from exc
    except UnidentifiedImageError as exc:
        raise Refused(f"{label} is not a JPEG, PNG, WebP or GIF image.") from exc
    except Exception as exc:
        # Untrusted bytes through C decoders: whatever goes wrong (OSError,
        # SyntaxError, ValueError, EOFError, MemoryError...) the answer is no.
        raise Refused(f"{label} could not be read: the file is damaged or incomplete.") from exc


def first_frame(upload: UploadedFile, *, label: str = "The image") -> Image.Image:
    """The upload's first frame, checked and decoded, EXIF orientation applied;
    ``Refused`` says why not."""
    with reading(upload, label):
        image = Image.open(upload, formats=list(FORMATS))
        width, height = image.size
        if width * height > MAX_PIXELS:
            raise Refused(
                f"{label} is {width} x {height} pixels: an image is at most "
                f"{MAX_PIXELS // 1_000_000} megapixels."
            )
        image.load()
        return ImageOps.exif_transpose(image)
