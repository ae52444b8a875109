"""Mastodon's OAuth scopes, and which of a token's scopes let it call an endpoint.

A token holds the scopes it was granted, at most those its app registered.
An endpoint names the granular scope it needs (``read:statuses``); the
top-level scope grants every granular one under it (``read``), and the old
``follow`` grants the follow, block and mute scopes, as on Mastodon.
"""

from oauth2_provider.scopes import BaseScopes

READ = (
    "accounts blocks bookmarks favourites filters follows lists mutes notifications search statuses"
)
WRITE = (
    "accounts blocks bookmarks conversations favourites filters follows lists media mutes "
    "notifications reports statuses"
)
FOLLOW_GRANTS = {
    "read:blocks",
    "read:follows",
    "read:mutes",
    "write:blocks",
    "write:follows",
    "write:mutes",
}
SCOPES: dict[str, str] = {
    "read": "Read everything your account can see",
    "write": "Post, and change your account and what you follow",
    "follow": "Follow, block and mute people (and see whom)",
    "push": "Receive notifications by Web Push",
    "profile": "Read who you are (your profile only)",
    **{f"read:{name}": f"Read your {name}" for name in READ.split()},
    **{f"write:{name}": f"Change your {name}" for name in WRITE.split()},
}
DEFAULT_SCOPES = ["read"]


def unknown(scopes: list[str]) -> list[str]:
    return [scope for scope in scopes if scope not in SCOPES]


def grants(held: list[str] | set[str], needed: str) -> bool:
    """Whether scopes ``held`` let a token do what needs ``needed``."""
    if needed in held or needed.split(":")[0] in held:
        return True
    if needed == "read:accounts" and "profile" in held:  # verify_credentials
        return True
    return needed in FOLLOW_GRANTS and "follow" in held


class RegisteredScopes(BaseScopes):
    """django-oauth-toolkit's scopes backend: an app may be granted what it registered,
    and the granular scopes under it."""

    def get_all_scopes(self) -> dict[str, str]:
        return SCOPES

    def get_available_scopes(self, application=None, request=None, *args, **kwargs) -> list[str]:
        if application is None:
            return list(SCOPES)
        registered = application.scopes.split()
        return [scope for scope in SCOPES if grants(registered, scope)]

    def get_default_scopes(self, application=None, request=None, *args, **kwargs) -> list[str]:
        return DEFAULT_SCOPES
