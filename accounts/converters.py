"""The ``<username:...>`` path converter of every ``/@<username>/...`` URL."""

from django.urls import register_converter


class UsernameConverter:
    """The characters a username may have (accounts.models.username_validator)."""

    regex = "[A-Za-z0-9_]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(UsernameConverter, "username")
