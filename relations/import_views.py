"""``/settings/import/follows/``: follow everyone a CSV lists (relations.follow_import).

GET shows the form and the latest import: its progress while the task runs
(the page reloads itself), then its report. POST (multipart ``file``) saves
the import, queues it and redirects to the page, or answers 400 with the
form's error when the file is refused (nothing followed then) or an import
is under way already.
"""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods

from feed_project.ratelimits import ratelimit
from relations import follow_import
from relations.models import FollowImport

# While an import runs the page reloads itself this often (seconds), with no script.
REFRESH_SECONDS = 3


class ImportFollowsForm(forms.Form):
    file = forms.FileField(
        label="CSV of accounts to follow",
        help_text=(
            f"The following.csv of an export: a first line naming the columns, one of them "
            f"username. At most {follow_import.MAX_ROWS:,} accounts a file."
        ),
    )

    def clean_file(self) -> list[follow_import.Entry]:
        try:
            return follow_import.read(self.cleaned_data["file"])
        except follow_import.Refused as exc:
            raise forms.ValidationError(str(exc)) from exc


def _page(request: HttpRequest, form: ImportFollowsForm, status: int = 200) -> HttpResponse:
    latest = follow_import.latest(request.user)
    under_way = latest is not None and latest.status != FollowImport.Status.DONE
    context = {
        "form": form,
        "import": latest,
        "under_way": under_way,
        "refresh_seconds": REFRESH_SECONDS if under_way else None,
        "report": follow_import.report_of(latest) if latest is not None else None,
    }
    response = render(request, "relations/import_follows.html", context, status=status)
    add_never_cache_headers(response)
    return response


@login_required
@require_http_methods(["GET", "POST"])
@ratelimit("import_follows")
def import_follows(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request, ImportFollowsForm())
    form = ImportFollowsForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            follow_import.start(user=request.user, entries=form.cleaned_data["file"])
        except follow_import.ImportUnderWay:
            form.add_error(None, "An import is under way already: wait for it to finish.")
        else:
            return redirect("relations:import_follows")
    return _page(request, form, status=400)
