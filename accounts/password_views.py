"""Password reset by e-mail and password change: Django's views, mail sent by a task.

The reset form answers the same whatever address is typed (no account
enumeration): the response is the redirect to "check your inbox" either
way, and the only difference, a task queued, happens after it is decided.
Setting a new password ends every session of the account; changing it while
signed in ends every other one (the current one is kept with
``update_session_auth_hash``, by Django's PasswordChangeView).
"""

from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.urls import reverse_lazy
from django.utils.decorators import method_decorator

from accounts import sessions, unique_names
from accounts.models import User
from accounts.tasks import enqueue_on_commit, send_password_reset_mail
from feed_project.ratelimits import ratelimit


class QueuedPasswordResetForm(auth_forms.PasswordResetForm):
    """Django's reset form, whose mail is rendered and sent by a task, not in the request."""

    def save(self, *, request: HttpRequest, **kwargs: Any) -> None:  # type: ignore[override]
        base_url = request.build_absolute_uri("/").rstrip("/")
        for user in self.get_users(self.cleaned_data["email"]):
            enqueue_on_commit(send_password_reset_mail, user.pk, base_url)

    def get_users(self, email: str) -> Iterator[User]:
        """The active account with this address (case-insensitively) and a password,
        found through the address's claim (one shard on Citus, accounts.unique_names)."""
        for user in unique_names.users_with_email(email).filter(is_active=True):
            if user.has_usable_password():
                yield user


@method_decorator(ratelimit("password_reset"), name="post")
class PasswordResetView(auth_views.PasswordResetView):
    form_class = QueuedPasswordResetForm
    template_name = "accounts/password_reset.html"
    success_url = reverse_lazy("accounts:password_reset_sent")

    def form_invalid(self, form: Any) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)


class PasswordResetSentView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_sent.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")
    post_reset_login = False

    def form_invalid(self, form: Any) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        # Django's session hash already stops other sessions at their next
        # request; deleting them also clears the sessions page.
        sessions.end_other_sessions(user=form.user, current_key=None)
        return response


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_reset_complete.html"


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("account_settings:security")

    def form_invalid(self, form: Any) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form: Any) -> HttpResponse:
        old_key = self.request.session.session_key
        # update_session_auth_hash keeps this session, under a new key.
        response = super().form_valid(form)
        new_key = self.request.session.session_key
        sessions.rekey(user=form.user, old_key=old_key, new_key=new_key)
        ended = sessions.end_other_sessions(user=form.user, current_key=new_key)
        note = f" {ended} other session{'s' if ended != 1 else ''} logged out." if ended else ""
        messages.success(self.request, f"Password changed.{note}")
        return response
