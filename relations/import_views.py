"""``/settings/import/follows/``: follow everyone a CSV lists (relations.follow_import).

GET shows the form, and the report of the import just made; POST (multipart
``file``) imports and redirects to it (the report waits in the session), or
answers 400 with the form's error when the file is refused (nothing followed
then).
"""

import dataclasses

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
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
        context = {"form": ImportFollowsForm(), "report": _report_of(request)}
        return render(request, "relations/import_follows.html", context)
    form = ImportFollowsForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "relations/import_follows.html", {"form": form}, status=400)
    report = follow_import.follow_all(user=request.user, entries=form.cleaned_data["file"])
    request.session[REPORT_KEY] = dataclasses.asdict(report)
    return redirect("relations:import_follows")


# The report of the import just made, shown once by the page the POST redirects to.
REPORT_KEY = "relations_import_report"


def _report_of(request: HttpRequest) -> follow_import.Report | None:
    saved = request.session.pop(REPORT_KEY, None)
    if not isinstance(saved, dict):
        return None
    problems = [follow_import.Problem(**problem) for problem in saved.pop("problems", [])]
    return follow_import.Report(**saved, problems=problems)
