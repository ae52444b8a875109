"""Admin for accounts: moderators find people and edit profiles.

Apps above extend this ``UserAdmin`` and register their subclass in its
place: ``relations.admin`` adds the follow graph, ``posts.moderation.admin``
the suspend and unsuspend actions. This module imports no app above accounts.
"""

from typing import Any

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import forms as auth_forms
from django.http import HttpRequest

from accounts.models import User

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
    readonly_fields = (*COUNTERS, "last_active_at", "last_login", "date_joined")
    # The exact count of a big users table is a sequential scan on every page.
    show_full_result_count = False
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Profile", {"fields": ("display_name", "bio", "email")}),
        ("Counters", {"fields": COUNTERS}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Activity", {"fields": ("last_active_at", "last_login", "date_joined")}),
    )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
