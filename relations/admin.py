"""The follow graph in the admin, read-only, on each user's page.

Django 5.2's admin refuses to register a model with a composite primary key
(``AdminSite.register`` raises ImproperlyConfigured), and ``Follower`` and
``Followee`` have one. So the graph is shown where a moderator looks for it:
the user's admin page lists their newest followers and followees, with the
counters, and links to the full keyset-paginated public lists.

Follows are never added or removed here: ``relations.services.follow`` and
``unfollow`` write both tables and both counters in one transaction, so the
two tables stay mirror images and the counters stay true.
"""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from accounts.admin import UserAdmin
from accounts.models import User
from relations.models import Followee, Follower

SHOWN = 20


def _user_links(users: list[User], full_list: str) -> SafeString:
    if not users:
        return mark_safe("<em>none</em>")  # a constant
    links = format_html_join(
        ", ",
        '<a href="{}">{}</a>',
        ((reverse("admin:accounts_user_change", args=[user.pk]), user.username) for user in users),
    )
    return format_html('{} &mdash; <a href="{}">full list</a>', links, full_list)


def _people(user_ids) -> list[User]:
    """These people, in this order: read by id after the follow rows (their rows are
    on their own shards, which a join cannot reach on Citus)."""
    user_ids = list(user_ids)
    found = User.objects.in_bulk(user_ids)
    return [found[user_id] for user_id in user_ids if user_id in found]


class FollowGraphUserAdmin(UserAdmin):
    """The accounts UserAdmin plus the user's newest followers and followees."""

    readonly_fields = (*UserAdmin.readonly_fields, "newest_followers", "newest_followees")
    fieldsets = (
        *UserAdmin.fieldsets,
        ("Follow graph (read-only)", {"fields": ("newest_followers", "newest_followees")}),
    )

    @admin.display(description=f"newest {SHOWN} followers")
    def newest_followers(self, user: User) -> SafeString:
        # Served by follower_list_idx (user, -created_at, -follower).
        rows = Follower.objects.filter(user_id=user.pk).order_by("-created_at", "-follower_id")
        people = _people(rows.values_list("follower_id", flat=True)[:SHOWN])
        return _user_links(people, f"/@{user.username}/followers/")

    @admin.display(description=f"newest {SHOWN} followees")
    def newest_followees(self, user: User) -> SafeString:
        rows = Followee.objects.filter(user_id=user.pk).order_by("-created_at", "-followee_id")
        people = _people(rows.values_list("followee_id", flat=True)[:SHOWN])
        return _user_links(people, f"/@{user.username}/following/")


admin.site.unregister(User)
admin.site.register(User, FollowGraphUserAdmin)
