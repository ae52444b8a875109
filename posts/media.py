"""Images of posts: checked by their content, re-encoded, stored, found, deleted.

An upload is taken only if Pillow opens it as a JPEG, PNG, WebP or GIF
(whatever its name says), of at most ``MAX_BYTES`` and ``MAX_PIXELS``
(all frames of an animation counted); anything else is ``Refused`` with a
sentence for the form. Pillow's decompression-bomb check is an error here,
not a warning, and the pixel limit is read from the header, before a pixel
is decoded. Every image is decoded and encoded again in its own format, with
its EXIF orientation applied and no metadata at all (EXIF, GPS, XMP, ICC,
comments): what is stored is pixels. A thumbnail (WebP, at most
``THUMBNAIL_SIZE``) is what lists show; the detail page shows the original.

Files go to ``storages["default"]`` (file system under MEDIA_ROOT, or any
django-storages backend: settings) under random names. They are written
before the post's transaction and deleted again if it fails, so a refused or
failed request leaves no file behind. A deleted post's media are marked
discarded in the delete's transaction; ``posts.tasks`` deletes their files,
then the rows.
"""

import contextlib
import io
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone
from django.utils.text import Truncator
from PIL import Image

from accounts.models import User
from feed_project.images import FORMATS, Refused, reading
from feed_project.images import frames as _frames
from posts import ids, page_queries
from posts.models import MAX_ALT_TEXT_LENGTH, Post, PostMedia

MAX_IMAGES = 4
THUMBNAIL_SIZE = (640, 640)
# What pixels need of the source's info (animation timing, transparency);
# everything else (exif, xmp, icc_profile, comment, dpi, text chunks) is dropped.
_KEPT_INFO = ("duration", "loop", "transparency", "background", "disposal")


@dataclass(frozen=True)
class Prepared:
    """An image checked and re-encoded, not stored yet."""

    original: bytes
    content_type: str
    extension: str
    width: int
    height: int
    thumbnail: bytes
    thumbnail_width: int
    thumbnail_height: int
    alt_text: str


def _encode(frames: list[Image.Image], fmt: str, kept: dict) -> bytes:
    """The frames in ``fmt`` with only ``kept`` of the source's info (animation, transparency)."""
    first = frames[0]
    if fmt == "JPEG" and first.mode not in ("RGB", "L"):
        first = first.convert("RGB")
    first.info = {}  # JPEG reads the comment from info: nothing of the source goes out
    params: dict = {"quality": 90} if fmt in ("JPEG", "WEBP") else {}
    if len(frames) > 1:
        params.update(kept, save_all=True, append_images=frames[1:])
    elif "transparency" in kept and fmt != "JPEG":
        params["transparency"] = kept["transparency"]
    out = io.BytesIO()
    first.save(out, fmt, **params)
    return out.getvalue()


def _thumbnail(image: Image.Image) -> tuple[bytes, int, int]:
    small = image.copy()
    if small.mode not in ("RGB", "RGBA"):
        alpha = "A" in small.mode or "transparency" in small.info
        small = small.convert("RGBA" if alpha else "RGB")
    small.info = {}
    small.thumbnail(THUMBNAIL_SIZE)
    out = io.BytesIO()
    small.save(out, "WEBP", quality=80)
    return out.getvalue(), small.width, small.height


def prepare(upload: UploadedFile, *, alt_text: str = "", label: str = "The image") -> Prepared:
    """Check one upload by its content and re-encode it; ``Refused`` says why not."""
    with reading(upload, label):
        image = Image.open(upload, formats=list(FORMATS))
        fmt = image.format or ""
        kept = {k: image.info[k] for k in _KEPT_INFO if k in image.info}
        frames = _frames(image, label)
        original = _encode(frames, fmt, kept)
        thumbnail, thumb_width, thumb_height = _thumbnail(frames[0])
    content_type, extension = FORMATS[fmt]
    return Prepared(
        original=original,
        content_type=content_type,
        extension=extension,
        width=frames[0].width,
        height=frames[0].height,
        thumbnail=thumbnail,
        thumbnail_width=thumb_width,
        thumbnail_height=thumb_height,
        alt_text=alt_text,
    )


def prepare_all(uploads: Sequence[UploadedFile], alt_texts: Sequence[str]) -> list[Prepared]:
    """A post's images, the i-th alt text with the i-th file; ``Refused`` on the first problem."""
    if len(uploads) > MAX_IMAGES:
        raise Refused(f"A post has at most {MAX_IMAGES} images (you chose {len(uploads)}).")
    alt_texts = [alt.strip() for alt in alt_texts]
    for n, alt in enumerate(alt_texts[len(uploads) :], start=len(uploads) + 1):
        if alt:
            raise Refused(f"Description {n} has no image: choose one, or leave it empty.")
    for n, alt in enumerate(alt_texts, start=1):
        if len(alt) > MAX_ALT_TEXT_LENGTH:
            raise Refused(
                f"Description {n} is {len(alt):,} characters: at most {MAX_ALT_TEXT_LENGTH:,}."
            )
    return [
        prepare(
            upload,
            alt_text=alt_texts[n] if n < len(alt_texts) else "",
            label=f"Image {n + 1} ({Truncator(upload.name or 'no name').chars(60)})",
        )
        for n, upload in enumerate(uploads)
    ]


# --- storage ---------------------------------------------------------------------------


def storage() -> Storage:
    return storages["default"]


@dataclass(frozen=True)
class Stored:
    """A prepared image whose files are in the storage, with no row yet."""

    image: Prepared
    file: str
    thumbnail: str


def store(*, author_id: int, images: Sequence[Prepared]) -> list[Stored]:
    """Write the files; on any failure delete what was written and raise."""
    stored: list[Stored] = []
    try:
        for image in images:
            token = secrets.token_urlsafe(16)
            base = f"posts/{author_id}/{token}"
            original = storage().save(f"{base}.{image.extension}", ContentFile(image.original))
            try:
                thumbnail = storage().save(f"{base}.thumb.webp", ContentFile(image.thumbnail))
            except BaseException:
                delete_files([original])
                raise
            stored.append(Stored(image=image, file=original, thumbnail=thumbnail))
    except BaseException:
        delete_files(names_of(stored))
        raise
    return stored


def names_of(stored: Iterable[Stored]) -> list[str]:
    return [name for item in stored for name in (item.file, item.thumbnail)]


def delete_files(names: Iterable[str]) -> None:
    """Delete these files; a missing one is fine (a retried task)."""
    for name in names:
        storage().delete(name)


def row(item: Stored, *, author_id: int, post_id: str | None, position: int | None) -> PostMedia:
    """The row of a stored image: a post's, or an upload no post named yet (``posts.uploads``)."""
    return PostMedia.objects.create(
        author_id=author_id,
        post_id=post_id,
        position=position,
        alt_text=item.image.alt_text,
        file=item.file,
        thumbnail=item.thumbnail,
        content_type=item.image.content_type,
        width=item.image.width,
        height=item.image.height,
        thumbnail_width=item.image.thumbnail_width,
        thumbnail_height=item.image.thumbnail_height,
        size=len(item.image.original),
        created_at=timezone.now(),
    )


def attach(*, post: Post, stored: Sequence[Stored]) -> None:
    """The rows of a new post's images; the caller holds the post's transaction."""
    # One INSERT each (four at most): bulk_create would take PostgreSQL's
    # UNNEST path, whose char[] cast cuts the post id to one character
    # (posts.fields.KeyField keeps its own column off that path; a key to it cannot).
    for position, item in enumerate(stored):
        row(item, author_id=post.author_id, post_id=post.pk, position=position)


def discard(*, post: Post) -> int:
    """Mark a deleted post's media for deletion: pages and the file view stop at once."""
    return PostMedia.objects.filter(
        author_id=post.author_id, post_id=post.pk, discarded_at__isnull=True
    ).update(discarded_at=timezone.now())


def discard_all(*, author_id: int) -> int:
    """Mark every image of an author for deletion (account erasure)."""
    return PostMedia.objects.filter(author_id=author_id, discarded_at__isnull=True).update(
        discarded_at=timezone.now()
    )


def delete_discarded(*, author_id: int) -> int:
    """Delete an author's discarded media: the files, then the rows. Idempotent."""
    rows = PostMedia.objects.filter(author_id=author_id, discarded_at__isnull=False)
    found = list(rows.values_list("pk", "file", "thumbnail"))
    delete_files(name for _, file, thumbnail in found for name in (file, thumbnail))
    PostMedia.objects.filter(author_id=author_id, pk__in=[pk for pk, _, _ in found]).delete()
    _forget_folder_of_erased(author_id)
    return len(found)


def _forget_folder_of_erased(author_id: int) -> None:
    """An erased author's folder goes too (file system): no name under MEDIA_ROOT is theirs.

    Only for erased accounts, which post no more: a living author's next post
    could be writing into the folder as it is removed.
    """
    files = storage()
    if not isinstance(files, FileSystemStorage):
        return  # object storage has no folders, only names
    if PostMedia.objects.filter(author_id=author_id).exists():
        return
    if not User.objects.filter(pk=author_id, erased_at__isnull=False).exists():
        return
    with contextlib.suppress(OSError):  # gone, or not empty
        os.rmdir(files.path(f"posts/{author_id}"))


def authors_with_discarded(*, older_than_seconds: int) -> list[int]:
    """Authors whose discarded media are still there this long after (a lost task)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return list(
        PostMedia.objects.filter(discarded_at__lt=cutoff)
        .values_list("author_id", flat=True)
        .distinct()
    )


# --- reads -------------------------------------------------------------------------------


def media_by_post(posts: Iterable[Post]) -> dict[str, list[PostMedia]]:
    """The live media of these posts, in order: one query a page, by (author, post)."""
    post_ids = sorted({post.pk for post in posts})
    if not post_ids:
        return {}
    authors = sorted({ids.author_of_post_id(post_id) for post_id in post_ids})
    params: dict[str, object] = {}
    rows = page_queries.models(
        PostMedia,
        f"SELECT {page_queries.columns(PostMedia)} FROM {PostMedia._meta.db_table}"
        f" WHERE author_id {page_queries.among(authors, params, 'authors', 'bigint')}"
        f" AND post_id {page_queries.among(post_ids, params)}"
        " AND discarded_at IS NULL ORDER BY post_id, position",
        params,
    )
    found: dict[str, list[PostMedia]] = {}
    for item in rows:
        found.setdefault(item.post_id, []).append(item)
    return found


def find(post: Post, position: int) -> PostMedia | None:
    """One live image of a post: a probe of (author, post, position)."""
    return PostMedia.objects.filter(
        author_id=post.author_id, post_id=post.pk, position=position, discarded_at__isnull=True
    ).first()
