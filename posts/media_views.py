"""``/posts/<id>/media/<n>/`` (and ``.../thumbnail/``): a post's image, to whoever may see the post.

Why a view, not the storage's URL in the page: hiding a post (a moderator,
a suspension, an account being deleted), deleting it, or a block must take
its images away at once, and a file that anyone holding its URL can fetch
cannot be taken back. So every image is answered by this view, which asks
the same questions as the detail page (live, or hidden for a moderator; not
blocked either way), one probe each by the post's author (the shard key):
404 otherwise. On the file system (development, or a shared volume) the
view sends the file; with another storage (S3 and the like through
django-storages) it redirects to the storage's URL, which should be a
signed, short-lived one (``querystring_auth``), so the check is still made
for every page view. Storage names are random as well, so a bucket made
public by mistake cannot be walked by guessing. Responses are ``private``:
no shared cache keeps an image a moderator may hide.
"""

from django.core.files.storage import FileSystemStorage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe

from feed_project.refusals import NotFound
from posts import media, uploads
from posts.models import PostMedia
from posts.moderation import services as moderation

# Browsers may keep an image this long: hiding a post takes it off pages at
# once, and off a browser's cache after this.
MAX_AGE_SECONDS = 600


@require_safe
def media_file(
    request: HttpRequest, post_id: str, position: int, thumbnail: bool = False
) -> HttpResponse:
    # The post, if this reader may see it (a moderator: hidden ones too), else 404.
    post = moderation.post_to_open(user=request.user, post_id=post_id, missing="No such image.")
    item = media.find(post, position)
    if item is None:
        raise Http404("No such image.")
    return _send(item, thumbnail=thumbnail)


@require_safe
def upload_file(
    request: HttpRequest, author_id: int, media_id: int, token: str, thumbnail: bool = False
) -> HttpResponse:
    """An image uploaded ahead of its post (``posts.uploads``), to whoever holds the URL its
    uploader was given, until a post takes it: then it is the post's, served as above."""
    try:
        item = uploads.unattached_by_token(author_id=author_id, media_id=media_id, token=token)
    except NotFound as exc:
        raise Http404("No such image.") from exc
    return _send(item, thumbnail=thumbnail)


def _send(item: PostMedia, *, thumbnail: bool) -> HttpResponse:
    name, content_type = (
        (item.thumbnail, "image/webp") if thumbnail else (item.file, item.content_type)
    )
    storage = media.storage()
    if isinstance(storage, FileSystemStorage):
        try:
            response: HttpResponse = FileResponse(storage.open(name), content_type=content_type)
        except FileNotFoundError as exc:
            raise Http404("No such image.") from exc
    else:
        response = HttpResponseRedirect(storage.url(name))
    patch_cache_control(response, private=True, max_age=MAX_AGE_SECONDS)
    return response
