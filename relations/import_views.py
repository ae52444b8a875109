"""``/settings/import/follows/``: follow everyone a CSV lists (relations.follow_import).

GET shows the form; POST (multipart ``file``) answers the report, or 400
with the form's error when the file is refused (nothing followed then).
"""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from feed_project.ratelimits import ratelimit
from relations import follow_import


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


@login_required
@require_http_methods(["GET", "POST"])
@ratelimit("import_follows")
def import_follows(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "relations/import_follows.html", {"form": ImportFollowsForm()})
    form = ImportFollowsForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "relations/import_follows.html", {"form": form}, status=400)
    report = follow_import.follow_all(user=request.user, entries=form.cleaned_data["file"])
    context = {"form": ImportFollowsForm(), "report": report}
    return render(request, "relations/import_follows.html", context)
