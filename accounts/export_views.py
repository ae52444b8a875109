"""/settings/export/: ask for an archive of your data, watch it being made, download it.

The import of follows (``/settings/import/follows/``) is relations' view; its
form is on this page too.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.storage import FileSystemStorage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_cache_control
from django.views.decorators.http import require_http_methods, require_safe

from accounts import exports
from accounts.models import Export
from feed_project.ratelimits import ratelimit

# While an archive is being made the page reloads itself this often (seconds):
# a <meta> refresh, so progress shows without JavaScript.
REFRESH_SECONDS = 3


@login_required
@require_http_methods(["GET", "POST"])
@ratelimit("export")
def export_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            exports.request_export(user=request.user)
        except exports.ExportUnderWay:
            messages.info(request, "Your archive is being prepared already.")
        else:
            messages.success(request, "Your archive is being prepared: this page shows how far.")
        return redirect("account_settings:export")
    export = exports.latest(request.user)
    under_way = export is not None and export.status in exports.UNFINISHED
    context = {
        "export": export,
        "under_way": under_way,
        "refresh_seconds": REFRESH_SECONDS if under_way else None,
        "download_token": (
            exports.download_token(export)
            if export is not None and export.status == Export.Status.READY
            else None
        ),
        "link_minutes": settings.EXPORT_LINK_MAX_AGE_SECONDS // 60,
    }
    response = render(request, "accounts/export.html", context)
    add_never_cache_headers(response)
    return response


@login_required
@require_safe
def download(request: HttpRequest, token: str) -> HttpResponse:
    """The archive, to its owner, while the link and the archive are both still good."""
    try:
        export = exports.export_for_download(token=token, user=request.user)
    except exports.LinkExpired:
        return render(request, "accounts/export_link_expired.html", status=410)
    storage = exports.storage()
    filename = f"feed-{request.user.username}-{timezone.localtime(export.created_at):%Y-%m-%d}.zip"
    if isinstance(storage, FileSystemStorage):
        try:
            source = storage.open(export.file, "rb")
        except FileNotFoundError as exc:
            raise Http404(exports.NO_SUCH_ARCHIVE) from exc  # its file went meanwhile
        response: HttpResponse = FileResponse(
            source, as_attachment=True, filename=filename, content_type="application/zip"
        )
    else:
        # Object storage: its own signed, short-lived URL (django-storages' querystring_auth).
        response = HttpResponseRedirect(storage.url(export.file))
    patch_cache_control(response, private=True, no_store=True)
    return response
