"""Admin for accounts: moderators find people and edit profiles.

Apps above extend this ``UserAdmin`` and register their subclass in its
place: ``relations.admin`` adds the follow graph, ``posts.moderation.admin``
the suspend and unsuspend actions. This module imports no app above accounts.
"""

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import forms as auth_forms
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from accounts import registration
from accounts.models import RegistrationSetting, SignupApplication, User
from feed_project.admin import ReadOnlyAdmin

COUNTERS = ("followers_count", "following_count", "posts_count")


class UserChangeForm(auth_forms.UserChangeForm):
    class Meta(auth_forms.UserChangeForm.Meta):
        model = User


class UserCreationForm(auth_forms.AdminUserCreationForm):
    class Meta(auth_forms.AdminUserCreationForm.Meta):
        model = User


@admin.register(User)
class UserAdmin(auth_admin.UserAdmin):
    """The custom user, with its counters shown and never edited by hand.

    Counters are kept by the services in the transaction that changes what
    they count; an edited counter would lie until someone noticed. Accounts
    are deactivated (``is_active``), not deleted: a delete would cascade to
    follows and posts without the services that keep other people's counters.
    """

    form = UserChangeForm
    add_form = UserCreationForm
    list_display = ("username", "display_name", *COUNTERS, "last_active_at", "is_staff")
    list_filter = ("is_staff", "is_active")
    search_fields = ("username", "display_name", "email")
    readonly_fields = (
        *COUNTERS,
        "last_active_at",
        "last_login",
        "date_joined",
        "email_verified_at",
        "unconfirmed_email",
    )
    # The exact count of a big users table is a sequential scan on every page.
    show_full_result_count = False
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Profile", {"fields": ("display_name", "bio")}),
        ("E-mail", {"fields": ("email", "email_verified_at", "unconfirmed_email")}),
        ("Counters", {"fields": COUNTERS}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Activity", {"fields": ("last_active_at", "last_login", "date_joined")}),
    )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(SignupApplication)
class SignupApplicationAdmin(ReadOnlyAdmin):
    """Applications for an account (REGISTRATION_MODE=approval): read the reason, decide."""

    list_display = ("user", "reason", "created_at", "approved", "decided_by", "decided_at")
    list_filter = ("approved",)
    # The applicant's row is on the application's shard; the moderator's is not
    # (a join Citus refuses): decided_by loads per decided row.
    list_select_related = ("user",)
    search_fields = ("user__username",)
    ordering = ("-created_at",)
    actions = ("approve", "reject")

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm("accounts.change_signupapplication")

    def _decide(self, request: HttpRequest, queryset: Any, approve: bool) -> None:
        base_url = request.build_absolute_uri("/").rstrip("/")
        decided = sum(
            registration.decide(
                application=application, moderator=request.user, approve=approve, base_url=base_url
            )
            for application in queryset
        )
        verb = "approved" if approve else "rejected"
        self.message_user(request, f"{decided} application(s) {verb}.")

    @admin.action(description="Approve: open the accounts", permissions=["decide"])
    def approve(self, request: HttpRequest, queryset: Any) -> None:
        self._decide(request, queryset, approve=True)

    @admin.action(description="Reject: the accounts stay closed", permissions=["decide"])
    def reject(self, request: HttpRequest, queryset: Any) -> None:
        self._decide(request, queryset, approve=False)

    def has_decide_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("accounts.change_signupapplication")


@admin.register(RegistrationSetting)
class RegistrationSettingAdmin(admin.ModelAdmin):
    """The admin switch of the registration mode: one row, saved over the setting's default.

    The list goes straight to the one row (or to the form that makes it);
    deleting the row returns to the ``REGISTRATION_MODE`` setting.
    """

    fields = ("mode", "changed_at", "changed_by")
    readonly_fields = ("changed_at", "changed_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return super().has_add_permission(request) and not RegistrationSetting.objects.exists()

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        name = "admin:accounts_registrationsetting"
        if RegistrationSetting.objects.filter(pk=1).exists():
            return HttpResponseRedirect(reverse(f"{name}_change", args=[1]))
        if self.has_add_permission(request):
            return HttpResponseRedirect(reverse(f"{name}_add"))
        return super().changelist_view(request, extra_context)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.base_fields["mode"].help_text = (
            f"Takes effect at once. Delete this choice to return to the REGISTRATION_MODE "
            f"setting ({settings.REGISTRATION_MODE})."
        )
        return form

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        obj.pk = 1
        obj.changed_at = timezone.now()
        obj.changed_by = request.user.get_username()
        super().save_model(request, obj, form, change)


# Invite, UserSession and RecoveryCode have composite primary keys (user first,
# for sharding), which the admin cannot show: invites are listed on their
# makers' /settings/invites/, sessions on /settings/security/.
