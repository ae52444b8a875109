"""Moderators: staff with the permissions the admin's moderation screens ask for."""

from django.contrib.auth.models import Permission
from django.db import transaction

from accounts import unique_names
from accounts.models import User

# (app label, codename): posts.moderate lets them hide and restore posts and work
# the report queue (posts/moderation/admin.py); the rest open those admin pages.
# By name: accounts sits below posts in the layers and never imports it.
MODERATOR_PERMISSIONS = (
    ("posts", "moderate"),
    ("posts", "view_post"),
    ("posts", "change_post"),
    ("posts", "view_report"),
    ("posts", "change_report"),
    ("accounts", "view_user"),
    ("accounts", "change_user"),
)


def make_moderator(*, username: str, password: str | None) -> tuple[User, bool]:
    """The account ``username`` as a moderator, made when missing (with ``password``).

    Returns the user and whether it was created. Needs no e-mail address,
    as sign-up asks for none.
    """
    with transaction.atomic():
        user = unique_names.users_named(username).first()
        created = user is None
        if user is None:
            user = User.objects.create_user(username=username, password=password)
        elif password:
            user.set_password(password)
        user.is_staff = True
        user.save()
        wanted = Permission.objects.none()
        for app_label, codename in MODERATOR_PERMISSIONS:
            wanted |= Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            )
        user.user_permissions.add(*wanted)
    return user, created
