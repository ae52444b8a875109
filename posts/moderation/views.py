"""The report buttons: ``POST /posts/<id>/report/`` and ``POST /@<username>/report/``."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from feed_project.http import redirect_back
from posts.moderation import services as moderation

THANKS = "Thanks, a moderator will look at it."


class ReportForm(forms.Form):
    # What kind of problem (the menu on every post); moderators read it first in the queue.
    category = forms.ChoiceField(
        choices=[("spam", "spam"), ("abuse", "abuse"), ("illegal", "illegal"), ("other", "other")],
        required=False,
    )
    reason = forms.CharField(max_length=500, required=False)


def _reason(request: HttpRequest) -> str:
    """The Report's reason as the moderators' queue shows it: "spam: the text typed"."""
    form = ReportForm(request.POST)
    if not form.is_valid():
        raise BadRequest("A report's reason is a category and at most 500 characters of text.")
    category, reason = form.cleaned_data["category"], form.cleaned_data["reason"]
    if not category:
        return reason
    return (f"{category}: {reason}" if reason else category)[:500]  # Report.reason's length


@require_POST
@login_required
def report_post(request: HttpRequest, post_id: str) -> HttpResponse:
    # Refused before the reason is read, as the reason's own errors come second.
    post = moderation.reportable_post(reporter=request.user, post_id=post_id)
    moderation.report(reporter=request.user, user=post.author, post=post, reason=_reason(request))
    messages.success(request, THANKS)
    return redirect_back(request, reverse("posts:detail", args=[post.pk]))


@require_POST
@login_required
def report_user(request: HttpRequest, username: str) -> HttpResponse:
    person = moderation.reportable_person(reporter=request.user, username=username)
    moderation.report(reporter=request.user, user=person, reason=_reason(request))
    messages.success(request, THANKS)
    return redirect_back(request, reverse("posts:profile", args=[person.username]))
